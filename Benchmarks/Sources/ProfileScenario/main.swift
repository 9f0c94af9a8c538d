// One scenario in a loop, for `perf record` and quick timing (it prints nanoseconds per operation).
// Usage: ProfileScenario observed|loadable|hand|observe [count] [observers]
//        ProfileScenario load|keypathload|handload [count] [rounds]
import HandWritten
import Processed

@MainActor
final class Model: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  @Observed var value = 0
  var numbers: LoadableState<Int> = .absent
}

let arguments = Array(CommandLine.arguments.dropFirst())
let scenario = arguments.first ?? "loadable"
let count = arguments.count > 1 ? Int(arguments[1]) ?? 2_000_000 : 2_000_000
let observerCount = arguments.count > 2 ? Int(arguments[2]) ?? 1 : 1
let clock = ContinuousClock()
let start = clock.now
var total = 0
await MainActor.run {
  var sink = 0
  var tokens: [ObservationToken] = []
  switch scenario {
  case "observed":
    let model = Model()
    for _ in 0..<observerCount { tokens.append(model.observe(\.value) { sink &+= $0 }) }
    for i in 0..<count { model.value = i }
  case "loadable":
    let loadable = Loadable<Int>()
    for _ in 0..<observerCount {
      tokens.append(loadable.projectedValue.observe { if case .loaded(let v) = $0 { sink &+= v } })
    }
    for i in 0..<count { loadable.wrappedValue = .loaded(i) }
  case "hand":
    let hand = HandRegistry()
    for _ in 0..<observerCount { _ = hand.add { sink &+= $0 } }
    for i in 0..<count { hand.set(i) }
  case "observe":
    let model = Model()
    for _ in 0..<count { model.observe(\.value) { _ in }.cancel() }
  default:
    break
  }
  withExtendedLifetime(tokens) {}
  total = sink
}
/// Loads issued back to back on the main actor, the last one awaited.
@MainActor
func backToBack(_ scenario: String) async {
  var last: Task<Void, Never>?
  switch scenario {
  case "load":
    let controller = Loadable<Int>().projectedValue
    for i in 0..<count { last = controller.load { i } }
  case "keypathload":
    let model = Model()
    for i in 0..<count { last = model.load(\.numbers) { i } }
  case "handload":
    let hand = HandLoader()
    for i in 0..<count { last = hand.load { i } }
  default:
    break
  }
  await last?.value
}
for _ in 0..<max(1, observerCount) { await backToBack(scenario) }
let elapsed = start.duration(to: clock.now)
let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
let operations = scenario.hasSuffix("load") ? count * max(1, observerCount) : count
print("\(scenario): \(Int(nanoseconds / Double(operations))) ns per operation (sink \(total))")

// A single scenario in a loop, for `valgrind --tool=callgrind` (instruction counts, not time).
// Usage: ProfileScenario observed|loadable|observe|load
import Processed

@MainActor
final class Model: ObservableModel {
  let observers = ObserverRegistry()
  @Observed var value = 0
}

let scenario = CommandLine.arguments.dropFirst().first ?? "loadable"
let count = Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 2_000_000
var sink = 0
await MainActor.run {
  switch scenario {
  case "observed":
    let model = Model()
    let token = model.observe(\.value) { sink &+= $0 }
    for i in 0..<count { model.value = i }
    token.cancel()
  case "loadable":
    let loadable = Loadable<Int>()
    let token = loadable.projectedValue.observe { if case .loaded(let v) = $0 { sink &+= v } }
    for i in 0..<count { loadable.wrappedValue = .loaded(i) }
    token.cancel()
  case "observe":
    let model = Model()
    for _ in 0..<count { model.observe(\.value) { _ in }.cancel() }
  default:
    break
  }
}
print(sink)

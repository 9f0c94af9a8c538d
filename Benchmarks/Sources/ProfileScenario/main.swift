// One scenario in a loop, for `perf record` and quick timing (it prints nanoseconds per operation).
// Usage: ProfileScenario observed|loadable|observe|load|keypathload [count] [observers]
import Processed
import Synchronization

@MainActor
final class Model: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  @Observed var value = 0
  var numbers: LoadableState<Int> = .absent
}

/// The benchmarks' floor: a value and handlers in an array behind a `Mutex`.
@MainActor
final class HandRegistry {
  typealias Handler = @MainActor @Sendable (Int) -> Void
  private(set) var value = 0
  private let observers = Mutex<[(id: Int, handler: Handler)]>([])
  private var nextID = 0

  func add(_ handler: @escaping Handler) -> Int {
    nextID &+= 1
    let id = nextID
    observers.withLock { $0.append((id, handler)) }
    return id
  }

  func set(_ newValue: Int) {
    value = newValue
    let snapshot = observers.withLock { $0 }
    for observer in snapshot { observer.handler(newValue) }
  }
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
switch scenario {
case "load":
  let controller = Loadable<Int>().projectedValue
  var last: Task<Void, Never>?
  for i in 0..<count { last = await MainActor.run { controller.load { i } } }
  await last?.value
case "keypathload":
  let model = Model()
  var last: Task<Void, Never>?
  for i in 0..<count { last = await MainActor.run { model.load(\.numbers) { i } } }
  await last?.value
default:
  break
}
let elapsed = start.duration(to: clock.now)
let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
print("\(scenario): \(Int(nanoseconds / Double(count))) ns per operation (sink \(total))")

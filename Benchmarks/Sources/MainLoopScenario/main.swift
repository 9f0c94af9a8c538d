// Main-actor load cycles and bursts with the main queue drained two ways: by `dispatchMain()` (what an `async` main
// does on Linux) or by `RunLoop.main.run()` (Foundation's run loop, as an app's main thread runs). It prints
// nanoseconds per load. No observer on either side.
// Usage: MainLoopScenario hand|ours|oursasync|handburst|oursburst [count] [dispatch|runloop]
import Dispatch
import Foundation
import HandWritten
import Processed

let arguments = Array(CommandLine.arguments.dropFirst())
let scenario = arguments.first ?? "hand"
let count = arguments.count > 1 ? Int(arguments[1]) ?? 100_000 : 100_000
let drain = arguments.count > 2 ? arguments[2] : "dispatch"

@MainActor
func run() async {
  let clock = ContinuousClock()
  let start = clock.now
  switch scenario {
  case "hand":
    let hand = HandLoader()
    for i in 0..<count { await hand.load { i }.value }
  case "ours":
    let state = Loadable<Int>().projectedValue
    for i in 0..<count {
      let task: Task<Void, Never> = state.load { i }
      await task.value
    }
  case "oursasync":
    let state = Loadable<Int>().projectedValue
    for i in 0..<count { await state.load { i } }
  case "handburst":
    let hand = HandLoader()
    var last: Task<Void, Never>?
    for i in 0..<count { last = hand.load { i } }
    await last?.value
  case "oursburst":
    let state = Loadable<Int>().projectedValue
    var last: Task<Void, Never>?
    for i in 0..<count { last = state.load { i } }
    await last?.value
  default:
    fatalError("unknown scenario \(scenario)")
  }
  let elapsed = clock.now - start
  let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
  print("\(scenario) [\(drain)]: \(Int(nanoseconds / Double(count))) ns per load")
}

Task { @MainActor in
  await run()
  exit(0)
}
if drain == "runloop" {
  RunLoop.main.run()
} else {
  dispatchMain()
}

// What the load policies cost: a load given `LoadOptions.default`, a load with a limiter, and a limiter's
// acquire/release pair without contention, each against the best hand-written code for the same job.
import HandWritten
import Processed
import Synchronization

extension ProcessedBenchmarks {
  @MainActor
  static func policies() async {
    await loadsWithOptions()
    await permitPairs()
    await writesWithActivityObserved()
  }

  /// A state write with one state observer, with and without an observer of the state's activity: a write that is
  /// not a load changes no activity, so the activity observer must cost it nothing.
  @MainActor
  static func writesWithActivityObserved() async {
    let writes = 20_000
    var sink = 0
    let plain = Loadable<Int>()
    let observed = Loadable<Int>()
    var tokens = [
      plain.projectedValue.observe { if case .loaded(let v) = $0 { sink &+= v } },
      observed.projectedValue.observe { if case .loaded(let v) = $0 { sink &+= v } },
    ]
    tokens.append(observed.projectedValue.observeActivity { _ in sink &+= 1 })
    let results = await measureSideBySide(
      operations: writes,
      [
        { for i in 0..<writes { plain.wrappedValue = .loaded(i) } },
        { for i in 0..<writes { observed.wrappedValue = .loaded(i) } },
      ])
    Bench.record(
      "activity", "@Loadable write, 1 observer + 1 activity observer", ours: results[1],
      against: "the same write, no activity observer", results[0], target: "≤ 1.1×", maxRatio: 1.1)
    withExtendedLifetime((tokens, sink)) {}
  }

  /// A load cycle with options that ask for nothing (`.default`) and with a limiter that is never contended, against
  /// the hand-written Task + generation boilerplate.
  @MainActor
  static func loadsWithOptions() async {
    let loads = 2_000
    let hand = HandLoader()
    _ = hand.observers.add { _ in }
    let controller = Loadable<Int>().projectedValue
    let token = controller.observe { _ in }
    let limited = LoadOptions(limiter: LoadLimiter(maxConcurrent: 4))
    let results = await measureSideBySide(
      operations: loads,
      [
        { for i in 0..<loads { await hand.load { i }.value } },
        {
          for i in 0..<loads {
            let task: Task<Void, Never> = controller.load(options: .default) { i }
            await task.value
          }
        },
        {
          for i in 0..<loads {
            let task: Task<Void, Never> = controller.load(options: limited) { i }
            await task.value
          }
        },
      ])
    Bench.record(
      "load cycle", "load(options: .default), Task form", ours: results[1],
      against: "hand-written Task + generation", results[0], target: "≤ 1.3×", maxRatio: 1.3)
    Bench.record(
      "load cycle", "load(options: limiter), Task form", ours: results[2],
      against: "hand-written Task + generation", results[0])
    withExtendedLifetime(token) {}
  }

  /// `withPermit { }` on a free limiter, against a hand-written counting semaphore (a `Mutex<Int>` taken once to
  /// take a permit and once to give it back).
  @MainActor
  static func permitPairs() async {
    let pairs = 20_000
    let limiter = LoadLimiter(maxConcurrent: 4)
    let semaphore = Mutex(0)
    var sink = 0
    let results = await measureSideBySide(
      operations: pairs,
      [
        {
          for _ in 0..<pairs {
            let taken = semaphore.withLock { count -> Bool in
              guard count < 4 else { return false }
              count += 1
              return true
            }
            if taken { sink &+= 1 }
            semaphore.withLock { $0 -= 1 }
          }
        },
        {
          for _ in 0..<pairs {
            try? await limiter.withPermit { sink &+= 1 }
          }
        },
      ])
    Bench.record(
      "limiter", "withPermit { } without contention", ours: results[1], against: "Mutex<Int> semaphore",
      results[0])
    Bench.absolute.append(
      (
        "limiter acquire + release, no contention", "\(fixed(results[1].nanoseconds, 0)) ns", "< 1000 ns",
        results[1].nanoseconds < 1000
      ))
    withExtendedLifetime(sink) {}
  }
}

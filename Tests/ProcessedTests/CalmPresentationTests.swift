import ProcessedTesting
import Testing

@testable import Processed

/// `LoadOptions.loadingDelay`, `minimumLoadingTime` and `cancellation`, on a TestClock.
@MainActor
@Suite struct CalmPresentationTests {
  let clock = TestClock()

  func calm(
    delay: Int? = nil, minimum: Int? = nil, restoring: Bool = false, retry: RetryPolicy = .never
  ) -> LoadOptions {
    LoadOptions(
      retry: retry, loadingDelay: delay.map { .milliseconds($0) },
      minimumLoadingTime: minimum.map { .milliseconds($0) },
      cancellation: restoring ? .restorePreviousState : .keepState, clock: clock)
  }

  // MARK: Loading delay

  @Test func aLoadEndingWithinTheDelayWritesOnlyItsResult() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    let task: Task<Void, Never> = model.$results.load(options: calm(delay: 1_000)) {
      try await clock.sleep(for: .milliseconds(999))
      return 1
    }
    #expect(model.$results.activity.phase == .running(attempt: 1))  // the activity shows the load at once
    try await clock.waitForSleepers(2)  // the block and the delay
    #expect(history.values.isEmpty)
    clock.advance(by: .milliseconds(999))
    await task.value
    #expect(history.values == [.loaded(1)])
    #expect(clock.sleeperCount == 0)  // the delay's wait ended with the load
  }

  @Test func aResultAtTheEndOfTheDelayIsWrittenAlone() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    let task: Task<Void, Never> = model.$results.load(options: calm(delay: 1_000)) {
      try await clock.sleep(for: .seconds(1))
      return 1
    }
    try await clock.waitForSleepers(2)
    clock.advance(by: .seconds(1))
    await task.value
    #expect(history.values == [.loaded(1)])
  }

  @Test func aLoadStillRunningAfterTheDelayWritesLoadingAtExactlyTheDelay() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    let gate = Gate()
    let task: Task<Void, Never> = model.$results.load(options: calm(delay: 1_000)) {
      await gate.wait()
      return 1
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(999))
    #expect(clock.sleeperCount == 1)
    #expect(history.values.isEmpty)
    clock.advance(by: .milliseconds(1))
    try await history.wait(forCount: 1)
    #expect(history.values == [.loading])
    gate.open()
    await task.value
    #expect(history.values == [.loading, .loaded(1)])
  }

  @Test func theDelayCountsFromTheEndOfTheDebounce() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    let gate = Gate()
    var options = calm(delay: 1_000)
    options.debounce = .trailing(.milliseconds(300))
    let task: Task<Void, Never> = model.$results.load(options: options) {
      await gate.wait()
      return 1
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(300))
    await gate.untilWaiting(1)
    try await clock.waitForSleepers(1)  // the delay, from now
    clock.advance(by: .milliseconds(999))
    #expect(history.values.isEmpty)
    clock.advance(by: .milliseconds(1))
    try await history.wait(forCount: 1)
    gate.open()
    await task.value
    #expect(history.values == [.loading, .loaded(1)])
  }

  @Test func aYieldCancelsThePendingStartState() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    let gate = Gate()
    let task: Task<Void, Never> = model.$results.load(options: calm(delay: 1_000)) { yield in
      yield(.loaded(1))
      await gate.wait()
      yield(.loaded(2))
    }
    await gate.untilWaiting(1)
    #expect(clock.sleeperCount == 0)  // the delay's wait was cancelled by the yield
    clock.advance(by: .seconds(5))
    gate.open()
    await task.value
    #expect(history.values == [.loaded(1), .loaded(2)])
  }

  @Test func aLoadCancelledWithinTheDelayWritesNothing() async throws {
    let model = PolicyModel()
    model.results = .loaded(1)
    let history = StateRecorder(model.$results)
    let task: Task<Void, Never> = model.$results.load(options: calm(delay: 1_000, restoring: true)) {
      try await clock.sleep(for: .seconds(10))
      return 2
    }
    try await clock.waitForSleepers(2)
    model.$results.cancel()
    await task.value
    #expect(history.values.isEmpty)
    #expect(model.results == .loaded(1))
    #expect(clock.sleeperCount == 0)
  }

  @Test func zeroOrNegativeDelaysActAsNone() async throws {
    for delay in [0, -5] {
      let model = PolicyModel()
      let history = StateRecorder(model.$results)
      let gate = Gate()
      let task: Task<Void, Never> = model.$results.load(options: calm(delay: delay)) {
        await gate.wait()
        return 1
      }
      #expect(history.values == [.loading])
      gate.open()
      await task.value
    }
  }

  // MARK: Minimum loading time

  @Test func theResultIsHeldUntilTheMinimumAfterTheStartState() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    let gate = Gate()
    var ended = false
    let task: Task<Void, Never> = model.$results.load(options: calm(minimum: 1_000)) {
      await gate.wait()
      return 1
    }
    let watcher = Task {
      await task.value
      ended = true
    }
    await gate.untilWaiting(1)
    clock.advance(by: .milliseconds(300))
    gate.open()
    try await clock.waitForSleepers(1)  // the hold
    #expect(history.values == [.loading])
    #expect(model.$results.activity.phase == .running(attempt: 1))
    clock.advance(by: .milliseconds(699))
    #expect(clock.sleeperCount == 1)
    #expect(!ended)
    clock.advance(by: .milliseconds(1))
    await watcher.value
    #expect(history.values == [.loading, .loaded(1)])
    #expect(model.$results.activity.phase == .idle)
  }

  @Test func aResultAfterTheMinimumIsWrittenAtOnce() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    let task: Task<Void, Never> = model.$results.load(options: calm(minimum: 1_000)) {
      try await clock.sleep(for: .seconds(2))
      return 1
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(2))
    await task.value
    #expect(history.values == [.loading, .loaded(1)])
  }

  @Test func aFailureIsHeldToo() async throws {
    let model = PolicyModel()
    let gate = Gate()
    let task: Task<Void, Never> = model.$results.load(options: calm(minimum: 500)) {
      await gate.wait()
      throw TestFailure()
    }
    await gate.untilWaiting(1)
    gate.open()
    try await clock.waitForSleepers(1)
    #expect(model.results == .loading)
    clock.advance(by: .milliseconds(500))
    await task.value
    #expect(model.results.error is TestFailure)
  }

  @Test(arguments: HoldBreaker.allCases)
  func aNewerCallDuringTheHoldActsAtOnceAndTheHeldResultIsNeverWritten(_ breaker: HoldBreaker) async throws {
    let model = PolicyModel()
    model.results = .loaded(0)
    let history = StateRecorder(model.$results)
    let task: Task<Void, Never> = model.$results.load(options: calm(minimum: 1_000, restoring: true)) { 1 }
    try await clock.waitForSleepers(1)  // the block returned; its result is held
    switch breaker {
    case .newerLoad: await model.$results.load { 2 }
    case .cancel: model.$results.cancel()
    case .reset: model.$results.reset()
    case .manualWrite: model.results = .loaded(3)
    case .cancelTask: task.cancel()
    }
    await task.value
    #expect(clock.sleeperCount == 0)
    clock.advance(by: .seconds(5))
    let expected: [LoadableState<Int>] =
      switch breaker {
      case .newerLoad: [.loading, .loaded(2)]
      case .cancel, .cancelTask: [.loading, .loaded(0)]  // restored: a cancellation during the hold
      case .reset: [.loading, .absent]
      case .manualWrite: [.loading, .loaded(3)]
      }
    #expect(history.values == expected)
  }

  enum HoldBreaker: CaseIterable, Sendable { case newerLoad, cancel, reset, manualWrite, cancelTask }

  @Test func aSupersedingLoadInheritsTheStartOfTheSpinnerOnScreen() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    let first: Task<Void, Never> = model.$results.load(options: calm(minimum: 1_000)) {
      try await clock.sleep(for: .seconds(10))
      return 1
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(600))
    let second: Task<Void, Never> = model.$results.load(options: calm(minimum: 1_000)) { 2 }
    await first.value
    try await clock.waitForSleepers(1)  // the hold, until 1 s after the first spinner
    clock.advance(by: .milliseconds(399))
    #expect(model.results == .loading)
    clock.advance(by: .milliseconds(1))
    await second.value
    #expect(history.values == [.loading, .loaded(2)])
  }

  @Test func aYieldEndsTheHold() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    let task: Task<Void, Never> = model.$results.load(options: calm(minimum: 1_000)) { yield in
      yield(.loaded(1))
      throw TestFailure()
    }
    await task.value
    #expect(history.values == [.loading, .loaded(1), .error(TestFailure())])
  }

  @Test func retriesRunWithinTheSameSpinnerAndTheHoldCountsFromItsStart() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    var attempts = 0
    let retry = RetryPolicy.exponential(maxRetries: 1, initialDelay: .milliseconds(100), jitter: .none)
    let task: Task<Void, Never> = model.$results.load(options: calm(minimum: 1_000, retry: retry)) {
      attempts += 1
      if attempts == 1 { throw TestFailure() }
      return 1
    }
    try await clock.waitForSleepers(1)  // the retry delay
    clock.advance(by: .milliseconds(100))
    try await clock.waitForSleepers(1)  // the hold
    clock.advance(by: .milliseconds(900))
    await task.value
    #expect(history.values == [.loading, .loaded(1)])
  }

  // MARK: Restoring the previous state

  @Test(arguments: CancelWay.allCases)
  func aCancelledLoadWritesBackTheStateItReplaced(_ way: CancelWay) async throws {
    let model = PolicyModel()
    model.results = .loaded(5)
    let history = StateRecorder(model.$results)
    let gate = Gate()
    var options = calm(restoring: true)
    var interrupted: Task<Void, Never>?
    let block: @MainActor () async throws -> Int = {
      switch way {
      case .throwsCancellationError:
        await gate.wait()
        throw CancellationError()
      case .throwsCancelLoadable:
        await gate.wait()
        throw CancelLoadable()
      default:
        try await clock.sleep(for: .seconds(10))
        return 6
      }
    }
    let task: Task<Void, Never>
    switch way {
    case .asyncCaller:
      task = Task { await model.$results.load(options: options, block: block) }
    case .interrupt:
      options.clock = clock
      task = model.$results.load(
        options: options, interrupts: [.seconds(1)], block: block, onInterrupt: { _ in throw CancelLoadable() })
      interrupted = task
    default:
      task = model.$results.load(options: options, block: block)
    }
    switch way {
    case .cancel:
      try await clock.waitForSleepers(1)
      model.$results.cancel()
    case .task, .asyncCaller:
      try await clock.waitForSleepers(1)
      task.cancel()
    case .throwsCancellationError, .throwsCancelLoadable:
      await gate.untilWaiting(1)
      gate.open()
    case .interrupt:
      try await clock.waitForSleepers(2)
      clock.advance(by: .seconds(1))
    }
    await task.value
    _ = interrupted
    #expect(history.values == [.loading, .loaded(5)])
    #expect(model.$results.activity.phase == .idle)
    gate.open()
  }

  struct TestFailure: Error, Equatable {}

  enum CancelWay: CaseIterable, Sendable {
    case cancel, task, asyncCaller, throwsCancellationError, throwsCancelLoadable, interrupt
  }

  @Test func supersedingAndResettingAreNotCancellations() async throws {
    let model = PolicyModel()
    model.results = .loaded(5)
    let history = StateRecorder(model.$results)
    let options = calm(restoring: true)
    let first: Task<Void, Never> = model.$results.load(options: options) {
      try await clock.sleep(for: .seconds(10))
      return 6
    }
    try await clock.waitForSleepers(1)
    let second: Task<Void, Never> = model.$results.load(options: options) {
      try await clock.sleep(for: .seconds(10))
      return 7
    }
    await first.value
    #expect(history.values == [.loading])  // superseded: nothing written back
    // The newer load took over the spinner: cancelling it writes back what the first one replaced.
    try await clock.waitForSleepers(1)
    model.$results.cancel()
    await second.value
    #expect(history.values == [.loading, .loaded(5)])
    let third: Task<Void, Never> = model.$results.load(options: options) {
      try await clock.sleep(for: .seconds(10))
      return 8
    }
    model.$results.reset()
    await third.value
    #expect(history.values == [.loading, .loaded(5), .loading, .absent])
  }

  @Test func nothingIsWrittenBackWhenSomethingElseWasWrittenSince() async throws {
    let model = PolicyModel()
    model.results = .loaded(5)
    let history = StateRecorder(model.$results)
    let gate = Gate()
    let task: Task<Void, Never> = model.$results.load(options: calm(restoring: true)) { yield in
      yield(.loaded(6))
      await gate.wait()
    }
    await gate.untilWaiting(1)
    model.$results.cancel()
    gate.open()
    await task.value
    #expect(history.values == [.loading, .loaded(6)])
  }

  @Test func aSilentLoadWritesNothingBack() async throws {
    let model = PolicyModel()
    model.results = .loaded(5)
    let history = StateRecorder(model.$results)
    let task: Task<Void, Never> = model.$results.load(silently: true, options: calm(restoring: true)) {
      try await clock.sleep(for: .seconds(10))
      return 6
    }
    try await clock.waitForSleepers(1)
    model.$results.cancel()
    await task.value
    #expect(history.values.isEmpty)
    #expect(model.results == .loaded(5))
  }

  @Test func keepStateLeavesTheSpinner() async throws {
    let model = PolicyModel()
    model.results = .loaded(5)
    let task: Task<Void, Never> = model.$results.load(options: calm()) {
      try await clock.sleep(for: .seconds(10))
      return 6
    }
    try await clock.waitForSleepers(1)
    model.$results.cancel()
    await task.value
    #expect(model.results == .loading)
  }

  // MARK: Processes and key paths

  @Test func aProcessIsCalmToo() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$save)
    let options = calm(delay: 200, minimum: 500, restoring: true)
    let quick: Task<Void, Never> = model.$save.run(options: options) {
      try await clock.sleep(for: .milliseconds(100))
    }
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(100))
    await quick.value
    #expect(history.values.count == 1 && history.values[0].hasFinished)  // no .running flash
    let finished = model.save
    let slow: Task<Void, Never> = model.$save.run(options: options) {
      try await clock.sleep(for: .seconds(10))
    }
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(200))
    try await history.wait(forCount: 2)
    #expect(history.values.last?.isRunning == true)
    model.$save.cancel()
    await slow.value
    #expect(history.values.count == 3)
    #expect(history.values.last == finished)  // written back
  }

  @Test func aKeyPathStateIsCalmToo() async throws {
    let model = PolicyModel()
    model.keyPathResults = .loaded(1)
    let history = StateRecorder(model, \.keyPathResults)
    let task: Task<Void, Never> = model.load(\.keyPathResults, options: calm(delay: 100, restoring: true)) {
      try await clock.sleep(for: .seconds(10))
      return 2
    }
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(100))
    try await history.wait(forCount: 1)
    model.cancel(\.keyPathResults)
    await task.value
    #expect(history.values == [.loading, .loaded(1)])
  }

  @Test func aCachedMissWaitsOutTheDelay() async throws {
    let model = PolicyModel()
    let cache = LoadCache(staleTime: .seconds(60))  // its collector sleeps on another clock
    let key = CacheKey<Int>("calm")
    let history = StateRecorder(model.$results)
    let gate = Gate()
    let task: Task<Void, Never> = model.$results.load(key, in: cache, options: calm(delay: 100)) {
      await gate.wait()
      return 1
    }
    await gate.untilWaiting(1)
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(100))
    try await history.wait(forCount: 1)
    gate.open()
    await task.value
    #expect(history.values == [.loading, .loaded(1)])
    let fresh: Task<Void, Never> = model.$results.load(key, in: cache, options: calm(delay: 100, minimum: 500)) {
      2
    }
    await fresh.value
    #expect(history.values == [.loading, .loaded(1)])  // a fresh hit never waits (nor writes what is shown)
    #expect(fresh == KeyPathTargetEnded.task)
  }

  @Test func aCachedMissHoldsItsResultForTheMinimum() async throws {
    let model = PolicyModel()
    let other = PolicyModel()
    let cache = LoadCache(staleTime: .seconds(60))
    let key = CacheKey<Int>("held")
    let history = StateRecorder(model.$results)
    let gate = Gate()
    var ended = false
    let task: Task<Void, Never> = model.$results.load(key, in: cache, options: calm(minimum: 1_000)) {
      await gate.wait()
      return 1
    }
    let joined: Task<Void, Never> = other.$results.load(key, in: cache) { 2 }  // no minimum: written at once
    let watcher = Task {
      await task.value
      ended = true
    }
    await gate.untilWaiting(1)
    clock.advance(by: .milliseconds(300))
    gate.open()
    await joined.value
    try await clock.waitForSleepers(1)  // the hold
    #expect(other.results == .loaded(1))
    #expect(history.values == [.loading])
    #expect(model.$results.activity.isActive)
    #expect(!ended)
    clock.advance(by: .milliseconds(699))
    #expect(clock.sleeperCount == 1)
    clock.advance(by: .milliseconds(1))
    await watcher.value
    #expect(history.values == [.loading, .loaded(1)])
  }

  @Test func aCancelDuringACachedHoldRestores() async throws {
    let model = PolicyModel()
    model.results = .loaded(0)
    let cache = LoadCache(staleTime: .seconds(60))
    let history = StateRecorder(model.$results)
    let task: Task<Void, Never> = model.$results.load(
      CacheKey<Int>("held"), in: cache, options: calm(minimum: 1_000, restoring: true)
    ) { 1 }
    try await clock.waitForSleepers(1)  // the hold
    model.$results.cancel()
    await task.value
    #expect(clock.sleeperCount == 0)
    #expect(history.values == [.loading, .loaded(0)])
    #expect(cache.value(for: CacheKey<Int>("held")) == 1)
  }

  /// Cancelling the returned task of a cached load or refresh while the entry's answer is held for the minimum loading
  /// time ends the call at once, drops the held answer and writes back what the spinner replaced (it waited for the
  /// hold, and then wrote the answer).
  @Test(arguments: [false, true])
  func cancellingTheTaskOfACachedLoadDuringTheHoldRestores(refresh: Bool) async throws {
    let model = PolicyModel()
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let history = StateRecorder(model.$results)
    let key = CacheKey<Int>("held by the task")
    let options = calm(minimum: 500, restoring: true)
    let block: @MainActor () async throws -> Int = { [clock] in
      try await clock.sleep(for: .milliseconds(100))
      return 1
    }
    let task: Task<Void, Never> =
      refresh
      ? model.$results.refresh(key, in: cache, options: options, block: block)
      : model.$results.load(key, in: cache, options: options, block: block)
    try await clock.waitForSleepers(1)  // the fetch
    clock.advance(by: .milliseconds(100))
    try await clock.waitForSleepers(1)  // the hold
    clock.advance(by: .milliseconds(100))
    task.cancel()
    try await task.value(timeLimit: .seconds(300), clock: clock)
    #expect(history.values == [.loading, .absent])
    #expect(clock.sleeperCount == 0)
    clock.advance(by: .seconds(1))
    #expect(model.results == .absent)
    #expect(cache.value(for: key) == 1)  // the entry keeps its answer
  }

  @Test func aLimitedLoadCountsItsDelayFromTheCallWhileItQueues() async throws {
    let limiter = LoadLimiter(maxConcurrent: 1)
    let first = PolicyModel()
    let second = PolicyModel()
    let history = StateRecorder(second.$results)
    let gate = Gate()
    var options = calm(delay: 500)
    options.limiter = limiter
    let running: Task<Void, Never> = first.$results.load(options: options) {
      await gate.wait()
      return 1
    }
    let queued: Task<Void, Never> = second.$results.load(options: options) { 2 }
    await gate.untilWaiting(1)
    try await clock.waitForSleepers(2)  // both delays
    #expect(second.$results.activity.phase == .waiting)
    clock.advance(by: .milliseconds(500))
    try await history.wait(forCount: 1)  // still queued after the delay: its spinner shows
    #expect(history.values == [.loading])
    gate.open()
    await running.value
    await queued.value
    #expect(history.values == [.loading, .loaded(2)])
  }

  @Test func aRefreshOfALoadedValueShowsNoSpinnerAndAnEmptyStateWaitsOutTheDelay() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    let options = calm(delay: 300, restoring: true)
    let first: Task<Void, Never> = model.$results.refresh(options: options) {
      try await clock.sleep(for: .milliseconds(100))
      return 1
    }
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(100))
    await first.value
    #expect(history.values == [.loaded(1)])  // from .absent, a refresh is a load: no flash within the delay
    let second: Task<Void, Never> = model.$results.refresh(options: options) {
      try await clock.sleep(for: .seconds(5))
      return 2
    }
    try await clock.waitForSleepers(1)  // no delay's wait: a refresh of a value writes no start state
    model.$results.cancel()
    await second.value
    #expect(history.values == [.loaded(1)])  // nothing to write back
  }

  @Test func aLoadCancelledThroughItsTaskDuringTheDelayNeverShowsItsSpinner() async throws {
    let model = PolicyModel()
    model.results = .loaded(1)
    let history = StateRecorder(model.$results)
    let gate = Gate()
    let task: Task<Void, Never> = model.$results.load(options: calm(delay: 100, restoring: true)) {
      await gate.wait()  // ignores cancellation
      return 2
    }
    await gate.untilWaiting(1)
    try await clock.waitForSleepers(1)  // the delay
    task.cancel()
    clock.advance(by: .seconds(1))
    gate.open()
    await task.value
    #expect(history.values.isEmpty)
    #expect(model.results == .loaded(1))
  }
}

import ProcessedTesting
import Testing

@testable import Processed

/// The testing helpers issue #38 added: a task awaited with a time limit, a recorder wait with a predicate, and a
/// clock that tells a cache's own timers from the sleepers a test waits for.
@MainActor
@Suite struct TestingHelpersTests {
  @Test func aTimeLimitedValueReturnsTheTasksValue() async throws {
    let task = Task { 42 }
    #expect(try await task.value(timeLimit: .seconds(30)) == 42)
    let failing = Task { () async throws -> Int in throw CancellationError() }
    await #expect(throws: CancellationError.self) { try await failing.value(timeLimit: .seconds(30)) }
  }

  /// The failure names what the clock had sleeping: the request, and the cache's timer apart.
  @Test func aTaskThatNeverEndsFailsWithWhatTheClockSaw() async throws {
    let clock = TestClock()
    let cache = LoadCache(clock: clock)
    cache.set(0, for: CacheKey<Int>("idle"))  // the collector sleeps until gcTime
    let screen = Loadable<Int>()
    let task: Task<Void, Never> = screen.projectedValue.load(CacheKey<Int>("slow"), in: cache) {
      try await clock.sleep(for: .seconds(5))
      return 1
    }
    try await clock.waitForSleepers(1)
    try await clock.waitForCacheTimers(1)
    #expect(clock.sleeperCount == 1 && clock.cacheTimerCount == 1)
    let error = await #expect(throws: TaskTimeLimitExceeded.self) {
      try await task.value(timeLimit: .milliseconds(20), clock: clock)
    }
    #expect(
      error?.description
        == "waited 0.02s for a task to end; the TestClock's sleepers: 1, sleeping until +5s (now +0s); and 1 cache timer"
    )
    clock.advance(by: .seconds(5))
    try await task.value(timeLimit: .seconds(30))
    #expect(screen.wrappedValue == .loaded(1))
  }

  @Test func aWaitForCacheTimersThatIsNeverMetFails() async {
    let clock = TestClock()
    await #expect(throws: TestClock.TimeLimitExceeded.self) {
      try await clock.waitForCacheTimers(1, timeLimit: .milliseconds(20))
    }
  }

  @Test func aRecorderWaitsUntilAValueOrTheHistoryMeetsAPredicate() async throws {
    let state = Loadable<Int>()
    let recorder = StateRecorder(state.projectedValue)
    let load: Task<Void, Never> = state.projectedValue.load { 3 }
    try await recorder.wait(until: { (value: LoadableState<Int>) in value.data == 3 })
    try await recorder.wait(until: { (values: [LoadableState<Int>]) in values == [.loading, .loaded(3)] })
    try await load.value(timeLimit: .seconds(30))
    let error = await #expect(throws: StateRecorder<LoadableState<Int>>.TimeLimitExceeded.self) {
      try await recorder.wait(until: { $0.count == 3 }, timeLimit: .milliseconds(20))
    }
    #expect(
      error?.description
        == "waited 0.02s for a history that meets the condition; recorded 2 changes: [LoadableState.loading, LoadableState.loaded(3)]"
    )
  }
}

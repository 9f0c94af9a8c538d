import ProcessedTesting
import Testing

@testable import Processed

/// `TestClock` itself, and every wait a load makes (timeouts, interrupts) driven through it: no real sleeps.
@MainActor
@Suite struct TestClockTests {
  /// Three tasks sleeping 3 s, 1 s and 2 s on `clock`; each records its index in `woken` when it wakes.
  func startSleepers(on clock: TestClock, recordingIn woken: StateRecorder<Int>) -> [Task<Void, Never>] {
    [3, 1, 2].enumerated().map { index, seconds in
      Task {
        try? await clock.sleep(until: clock.now.advanced(by: .seconds(seconds)))
        woken.record(index)
      }
    }
  }

  @Test func sleepersWakeAtTheirDeadlinesInOrder() async throws {
    let clock = TestClock()
    let woken = StateRecorder<Int>()
    let tasks = startSleepers(on: clock, recordingIn: woken)
    try await clock.waitForSleepers(3)
    clock.advance(by: .milliseconds(999))
    #expect(clock.sleeperCount == 3)
    clock.advance(by: .milliseconds(1))
    await tasks[1].value
    #expect(woken.values == [1])
    clock.advance(to: TestClock.Instant(offset: .seconds(2)))
    await tasks[2].value
    #expect(woken.values == [1, 2])
    #expect(clock.sleeperCount == 1)
    clock.advance(to: TestClock.Instant(offset: .seconds(3)))
    for task in tasks { await task.value }
    #expect(woken.values == [1, 2, 0])
    #expect(clock.sleeperCount == 0)
    #expect(clock.now == TestClock.Instant(offset: .seconds(3)))
  }

  @Test func oneAdvanceWakesEverySleeperItPasses() async throws {
    let clock = TestClock()
    let woken = StateRecorder<Int>()
    let tasks = startSleepers(on: clock, recordingIn: woken)
    try await clock.waitForSleepers(3)
    clock.advance(by: .seconds(5))
    for task in tasks { await task.value }
    // Resumed in deadline order; after that, which task reaches the main actor first is the scheduler's choice.
    #expect(Set(woken.values) == [0, 1, 2])
    #expect(clock.sleeperCount == 0)
  }

  @Test func aDeadlineThatHasPassedReturnsAtOnce() async throws {
    let clock = TestClock(now: TestClock.Instant(offset: .seconds(10)))
    try await clock.sleep(until: TestClock.Instant(offset: .seconds(10)))
    try await clock.sleep(until: TestClock.Instant(offset: .zero))
    try await clock.sleep(for: .zero)
    #expect(clock.sleeperCount == 0)
  }

  @Test func aCancelledSleepThrowsAndLeavesTheClock() async throws {
    let clock = TestClock()
    let task = Task { () -> Bool in
      do {
        try await clock.sleep(for: .seconds(1))
        return false
      } catch {
        return error is CancellationError
      }
    }
    try await clock.waitForSleepers(1)
    task.cancel()
    #expect(await task.value)
    #expect(clock.sleeperCount == 0)
  }

  @Test func waitingForSleepersResolvesWhenTheLastOneArrives() async throws {
    let clock = TestClock()
    let first = Task { try? await clock.sleep(for: .seconds(1)) }
    try await clock.waitForSleepers(1)
    let waiter = Task { try await clock.waitForSleepers(2) }
    #expect(clock.sleeperCount == 1)
    let second = Task { try? await clock.sleep(for: .seconds(2)) }
    try await waiter.value
    #expect(clock.sleeperCount == 2)
    clock.advance(by: .seconds(2))
    await first.value
    await second.value
  }

  @Test func aWaitThatIsNeverMetFailsAfterItsTimeLimit() async {
    let clock = TestClock()
    await #expect(throws: TestClock.TimeLimitExceeded.self) {
      try await clock.waitForSleepers(1, timeLimit: .milliseconds(20))
    }
  }

  /// The failure says what the wait saw: how many tasks slept, until when, and the clock's time.
  @Test func aFailedWaitSaysHowManySleptAndUntilWhen() async throws {
    let clock = TestClock()
    let sleeper = Task { try? await clock.sleep(for: .seconds(5)) }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(2))
    let error = await #expect(throws: TestClock.TimeLimitExceeded.self) {
      try await clock.waitForSleepers(2, timeLimit: .milliseconds(20))
    }
    #expect(
      error?.description
        == "waited 0.02s for 2 tasks to sleep on the TestClock; saw 1, sleeping until +5s (now +2s)")
    let none = await #expect(throws: TestClock.TimeLimitExceeded.self) {
      try await TestClock().waitForSleepers(1, timeLimit: .milliseconds(20))
    }
    #expect(none?.description == "waited 0.02s for 1 task to sleep on the TestClock; saw none (now +0s)")
    clock.advance(by: .seconds(3))
    await sleeper.value
  }

  @Test func aCancelledSleeperStopsCountingBeforeCancelReturns() async throws {
    let clock = TestClock()
    let sleeper = Task { try? await clock.sleep(for: .seconds(1)) }
    try await clock.waitForSleepers(1)
    sleeper.cancel()
    #expect(clock.sleeperCount == 0)  // not only once the task has run again
    await sleeper.value
  }

  /// A block sleeping on the clock (a server that never answers) is cancelled by its timeout within `advance`: once
  /// `advance` returns, it no longer counts. (Before, it counted until the load's task had run the timeout.)
  @Test func aTimedOutBlockStopsCountingWithinAdvance() async throws {
    let clock = TestClock()
    let state = Loadable<Int>()
    let history = StateRecorder(state.projectedValue)
    let task: Task<Void, Never> = state.projectedValue.load(options: LoadOptions(timeout: .seconds(1), clock: clock)) {
      try await clock.sleep(for: .seconds(60))
      return 1
    }
    try await clock.waitForSleepers(2)  // the block and the timeout
    clock.advance(by: .seconds(1))
    #expect(clock.sleeperCount == 0)
    try await history.wait(forHistory: [.loading, .error(TimeoutError())])
    await task.value
  }

  /// The test: after the advance that times the first attempt out, `waitForSleepers(1)` waits for the retry
  /// delay — it used to return at once, counting the timed-out block, and the test then moved time too early and hung.
  @Test func afterATimeoutWaitingForOneSleeperWaitsForTheRetryDelay() async throws {
    let clock = TestClock()
    let state = Loadable<Int>()
    let history = StateRecorder(state.projectedValue)
    var attempts = 0
    let options = LoadOptions(retry: .constant(.seconds(2), maxRetries: 1), timeout: .seconds(1), clock: clock)
    let task: Task<Void, Never> = state.projectedValue.load(options: options) {
      attempts += 1
      if attempts == 1 { try await clock.sleep(for: .seconds(60)) }  // never answers in time
      return attempts
    }
    try await clock.waitForSleepers(2)  // the block and the timeout
    clock.advance(by: .seconds(1))
    try await clock.waitForSleepers(1)  // the retry delay
    #expect(state.projectedValue.activity.phase == .retrying(attempt: 2))
    clock.advance(by: .seconds(2))
    try await history.wait(forHistory: [.loading, .loaded(2)])
    await task.value
    #expect(attempts == 2)
    #expect(clock.sleeperCount == 0)
  }

  @Test func hugeDurationsSaturateInsteadOfTrapping() async throws {
    let clock = TestClock()
    let task = Task { try? await clock.sleep(for: .seconds(Int64.max)) }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(Int64.max))
    clock.advance(by: .seconds(Int64.max))
    await task.value
    #expect(clock.now == TestClock.Instant(offset: .seconds(Int64.max)))
    #expect(TestClock.Instant(offset: .seconds(Int64.min)).duration(to: clock.now) == .seconds(Int64.max))
  }

  @Test func advancingByANegativeDurationIsAPreconditionFailure() async {
    await #expect(processExitsWith: .failure) {
      TestClock().advance(by: .seconds(-1))
    }
  }
}

import ProcessedTesting
import Testing

@testable import Processed

/// A timeout ends the attempt, not the load: with a retry policy, a timed-out attempt is retried.
@MainActor
@Suite struct TimeoutRetryTests {
  @Test func aTimedOutAttemptIsRetriedAndTheLastTimeoutIsWritten() async throws {
    let clock = TestClock()
    let state = Loadable<Int>()
    let history = StateRecorder(state.projectedValue)
    let gate = Gate()
    var attempts = 0
    let options = LoadOptions(
      retry: .constant(.seconds(2), maxRetries: 2), timeout: .seconds(1), clock: clock)
    let task: Task<Void, Never> = state.projectedValue.load(options: options) {
      attempts += 1
      await gate.wait()  // slower than the timeout, and ignores cancellation
      return attempts
    }
    for _ in 1...2 {
      try await clock.waitForSleepers(1)  // the timeout
      clock.advance(by: .seconds(1))
      try await clock.waitForSleepers(1)  // the retry delay
      clock.advance(by: .seconds(2))
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    await task.value
    #expect(attempts == 3)
    #expect(gate.waiting == 3)  // every attempt's block still runs, none wrote
    gate.open()
    await gate.untilWaiting(0)
    #expect(history.values == [.loading, .error(TimeoutError())])
    #expect(clock.sleeperCount == 0)
  }

  /// SPEC: interrupts count from the moment the first attempt starts (not from the call: a debounce comes first)
  /// and span all attempts (a retry does not restart them).
  @Test func interruptsCountFromTheFirstAttemptAndSpanAllAttempts() async throws {
    let clock = TestClock()
    let state = Loadable<Int>()
    let gate = Gate()
    var fired: [Duration] = []
    let firing = Signal()  // fired after each call of `onInterrupt`
    var attempts = 0
    let options = LoadOptions(
      retry: .constant(.seconds(1), maxRetries: 1), debounce: .trailing(.seconds(5)), clock: clock)
    let task: Task<Void, Never> = state.projectedValue.load(
      options: options, interrupts: [.seconds(1), .seconds(1)]
    ) {
      attempts += 1
      if attempts == 1 { throw CancellationLikeFailure() }
      await gate.wait()
      return 2
    } onInterrupt: {
      fired.append($0)
      firing.fire()
    }
    try await clock.waitForSleepers(1)  // the debounce only: no interrupt counts yet
    clock.advance(by: .seconds(5))
    try await clock.waitForSleepers(2)  // the first interrupt and the retry delay
    #expect(fired.isEmpty)
    clock.advance(by: .seconds(1))
    await until(.signal(firing), .arrivals(at: gate)) { fired.count == 1 && gate.waiting == 1 }
    try await clock.waitForSleepers(1)  // the second interrupt, during the second attempt
    clock.advance(by: .seconds(1))
    await until(.signal(firing)) { fired.count == 2 }
    #expect(fired == [.seconds(1), .seconds(2)])
    gate.open()
    await task.value
    #expect(state.wrappedValue == .loaded(2))
    #expect(clock.sleeperCount == 0)
  }

  @Test func aRetriedAttemptThatFinishesInTimeWins() async throws {
    let clock = TestClock()
    let state = Loadable<Int>()
    let gate = Gate()
    var attempts = 0
    let options = LoadOptions(retry: .constant(.zero, maxRetries: 1), timeout: .seconds(1), clock: clock)
    let task: Task<Void, Never> = state.projectedValue.load(options: options) { yield in
      attempts += 1
      let attempt = attempts
      if attempt == 1 { await gate.wait() }  // ignores the timeout's cancellation
      yield(.loaded(attempt))
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    await task.value
    #expect(attempts == 2)
    #expect(state.wrappedValue == .loaded(2))
    gate.open()  // the timed-out first attempt returns late: its yield is dropped
    await gate.untilWaiting(0)
    await Task.yield()
    #expect(state.wrappedValue == .loaded(2))
  }
}

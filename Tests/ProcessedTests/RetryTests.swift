import ProcessedTesting
import Testing

@testable import Processed

/// Retries driven by the engine, on a TestClock.
@MainActor
@Suite struct RetryTests {
  struct Failure: Error, Equatable { let attempt: Int }

  @Test func nothingIsWrittenBetweenAttemptsAndTheSuccessIs() async throws {
    let clock = TestClock()
    let model = OptionsModel()
    let history = StateRecorder(model.$plain)
    var attempts = 0
    let options = LoadOptions(
      retry: .exponential(maxRetries: 3, initialDelay: .seconds(1), jitter: .none), clock: clock)
    let task: Task<Void, Never> = model.$plain.load(options: options) {
      attempts += 1
      if attempts < 3 { throw Failure(attempt: attempts) }
      return attempts
    }
    try await clock.waitForSleepers(1)
    #expect(attempts == 1)
    clock.advance(by: .milliseconds(999))
    #expect(attempts == 1)
    clock.advance(by: .milliseconds(1))
    try await clock.waitForSleepers(1)  // the second delay, twice as long
    #expect(attempts == 2)
    clock.advance(by: .seconds(2))
    await task.value
    #expect(attempts == 3)
    #expect(history.values == [.loading, .loaded(3)])
  }

  @Test func theLastAttemptsErrorIsWritten() async throws {
    let clock = TestClock()
    let model = OptionsModel()
    let history = StateRecorder(model, \.keyPathState)
    var attempts = 0
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 2), clock: clock)
    let task: Task<Void, Never> = model.load(\.keyPathState, options: options) {
      attempts += 1
      throw Failure(attempt: attempts)
    }
    for _ in 1...2 {
      try await clock.waitForSleepers(1)
      clock.advance(by: .seconds(1))
    }
    await task.value
    #expect(attempts == 3)
    #expect(history.values == [.loading, .error(Failure(attempt: 3))])
  }

  @Test(arguments: ["cancel", "reset", "newer load", "manual write", "task cancelled"])
  func aLoadThatStopsBeingCurrentStopsWhileWaitingToRetry(_ how: String) async throws {
    let clock = TestClock()
    let model = OptionsModel()
    let history = StateRecorder(model.$plain)
    var attempts = 0
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 5), clock: clock)
    let task: Task<Void, Never> = model.$plain.load(options: options) {
      attempts += 1
      throw Failure(attempt: attempts)
    }
    try await clock.waitForSleepers(1)
    switch how {
    case "cancel": model.$plain.cancel()
    case "reset": model.$plain.reset()
    case "newer load": await model.$plain.load { 9 }
    case "manual write": model.plain = .loaded(7)
    default: task.cancel()
    }
    await task.value  // the delay ended at once: the task is done
    #expect(clock.sleeperCount == 0)
    clock.advance(by: .seconds(10))
    #expect(attempts == 1)
    let expected: [LoadableState<Int>] =
      switch how {
      case "reset": [.loading, .absent]
      case "newer load": [.loading, .loaded(9)]
      case "manual write": [.loading, .loaded(7)]
      default: [.loading]
      }
    #expect(history.values == expected)
  }

  @Test func yieldsOfAFailedAttemptStayWrittenAndProcessesRetryToo() async throws {
    let clock = TestClock()
    let model = OptionsModel()
    let history = StateRecorder(model.$plain)
    var attempts = 0
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 1), clock: clock)
    let task: Task<Void, Never> = model.$plain.load(options: options) { yield in
      attempts += 1
      yield(.loaded(attempts))
      if attempts == 1 { throw Failure(attempt: 1) }
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    await task.value
    #expect(history.values == [.loading, .loaded(1), .loaded(2)])

    let runs = StateRecorder(model.$action)
    var runAttempts = 0
    let run: Task<Void, Never> = model.$action.run(.save, options: options) {
      runAttempts += 1
      if runAttempts == 1 { throw Failure(attempt: 1) }
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    await run.value
    #expect(runs.values == [.running(.save), .finished(.save)])
  }

  @Test func controlErrorsAreNotRetried() async throws {
    let clock = TestClock()
    let model = OptionsModel()
    var attempts = 0
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 5), clock: clock)
    await model.$plain.load(options: options) {
      attempts += 1
      throw ResetLoadable()
    }
    #expect(attempts == 1)
    #expect(model.plain == .absent)
    #expect(clock.sleeperCount == 0)
  }
}

import ProcessedTesting
import Testing

@testable import Processed

@MainActor
@Suite struct TimeoutTests {
  @Test func anAttemptThatRunsPastItsTimeoutEndsWithTimeoutError() async throws {
    let clock = TestClock()
    let model = OptionsModel()
    let history = StateRecorder(model.$plain)
    let gate = Gate()
    let task: Task<Void, Never> = model.$plain.load(options: LoadOptions(timeout: .seconds(10), clock: clock)) {
      await gate.wait()
      return 1
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(9))
    #expect(history.values == [.loading])
    clock.advance(by: .seconds(1))
    try await history.wait(forCount: 2)
    #expect(history.values == [.loading, .error(TimeoutError())])
    // The block ignores cancellation: its value, when it comes, is never written.
    gate.open()
    await task.value
    #expect(history.values == [.loading, .error(TimeoutError())])
    #expect(clock.sleeperCount == 0)
  }

  @Test func aBlockThatFinishesInTimeStopsTheTimer() async throws {
    let clock = TestClock()
    let model = OptionsModel()
    await model.$plain.load(options: LoadOptions(timeout: .seconds(10), clock: clock)) { 1 }
    #expect(model.plain == .loaded(1))
    #expect(clock.sleeperCount == 0)
    clock.advance(by: .seconds(10))
    #expect(model.plain == .loaded(1))
  }

  @Test func theTimeoutOfAKeyPathLoadAndOfAnAwaitedRun() async throws {
    let clock = TestClock()
    let model = OptionsModel()
    let states = StateRecorder(model, \.keyPathState)
    let load = Task {
      await model.load(\.keyPathState, options: LoadOptions(timeout: .seconds(1), clock: clock)) {
        try await clock.sleep(for: .seconds(5))
        return 1
      }
    }
    try await clock.waitForSleepers(2)  // the block and the timeout
    clock.advance(by: .seconds(1))
    await load.value
    #expect(states.values == [.loading, .error(TimeoutError())])

    let runs = StateRecorder(model.$action)
    let run = Task {
      await model.$action.run(.save, options: LoadOptions(timeout: .seconds(2), clock: clock)) {
        try await clock.sleep(for: .seconds(5))
      }
    }
    try await clock.waitForSleepers(2)
    clock.advance(by: .seconds(2))
    await run.value
    #expect(runs.values == [.running(.save), .failed(process: .save, error: TimeoutError())])
    #expect(clock.sleeperCount == 0)
  }

  @Test func aSupersededLoadsTimeoutNeverFires() async throws {
    let clock = TestClock()
    let model = OptionsModel()
    let history = StateRecorder(model.$plain)
    let gate = Gate()
    let options = LoadOptions(timeout: .seconds(1), clock: clock)
    let older: Task<Void, Never> = model.$plain.load(options: options) {
      await gate.wait()
      return 1
    }
    try await clock.waitForSleepers(1)
    await model.$plain.load { 2 }
    clock.advance(by: .seconds(5))
    gate.open()
    await older.value
    #expect(history.values == [.loading, .loaded(2)])
  }

  @Test func aHugeTimeoutNeverFires() async throws {
    let clock = TestClock()
    let model = OptionsModel()
    let gate = Gate()
    let task: Task<Void, Never> = model.$plain.load(options: LoadOptions(timeout: .seconds(Int64.max), clock: clock)) {
      await gate.wait()
      return 1
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(86_400 * 365))
    #expect(model.plain == .loading)
    gate.open()
    await task.value
    #expect(model.plain == .loaded(1))
  }

  @Test func interruptsSleepOnTheOptionsClockAndAccumulate() async throws {
    let clock = TestClock()
    let model = OptionsModel()
    let delays = StateRecorder<Duration>()
    let secondInterrupt = WrapperLatch<Void>()
    let gate = Gate()
    let task: Task<Void, Never> = model.$plain.load(
      options: LoadOptions(clock: clock), interrupts: [.seconds(1), .seconds(2)]
    ) {
      await gate.wait()
      return 1
    } onInterrupt: { accumulated in
      delays.record(accumulated)
      if delays.values.count == 2 { secondInterrupt.fulfil() }
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    try await clock.waitForSleepers(1)  // the second interrupt's sleep
    #expect(delays.values == [.seconds(1)])
    clock.advance(by: .seconds(2))
    await secondInterrupt.value()
    #expect(delays.values == [.seconds(1), .seconds(3)])
    gate.open()
    await task.value
    #expect(model.plain == .loaded(1))
  }

  @Test func hugeAndNegativeInterruptDelaysOnATestClockHaveDefinedOutcomes() async throws {
    let clock = TestClock()
    let model = OptionsModel()
    let delays = StateRecorder<Duration>()
    let gate = Gate()
    let task: Task<Void, Never> = model.$plain.load(
      options: LoadOptions(clock: clock), interrupts: [.seconds(-5), .zero, .seconds(Int64.max), .seconds(1)]
    ) {
      await gate.wait()
      return 1
    } onInterrupt: { accumulated in
      delays.record(accumulated)
    }
    try await clock.waitForSleepers(1)  // the negative and zero delays fired at once; the huge one is sleeping
    #expect(delays.values == [.zero, .zero])
    clock.advance(by: .seconds(86_400 * 365 * 1_000))
    try await clock.waitForSleepers(1)  // still sleeping: a huge delay means never, in practice
    #expect(delays.values == [.zero, .zero])
    gate.open()
    await task.value
    #expect(model.plain == .loaded(1))
    #expect(clock.sleeperCount == 0)
  }

  @Test func aClockWhoseSleepThrowsEndsNoLoad() async throws {
    let model = OptionsModel()
    let options = LoadOptions(timeout: .seconds(1), clock: ThrowingClock())
    await model.$plain.load(options: options) { 1 }
    #expect(model.plain == .loaded(1))
  }
}

/// A clock whose every sleep throws at once.
struct ThrowingClock: Clock {
  struct Failure: Error {}
  var now: ContinuousClock.Instant { ContinuousClock().now }
  var minimumResolution: Duration { .zero }
  func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws { throw Failure() }
}

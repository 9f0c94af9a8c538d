import ProcessedTesting
import Testing

@testable import Processed

/// `TestClock` itself, and every wait a load makes (timeouts, interrupts) driven through it: no real sleeps.
@MainActor
@Suite struct TestClockTests {
  /// Three tasks sleeping 3 s, 1 s and 2 s on `clock`; each records its index in `woken` when it wakes.
  func startSleepers(on clock: TestClock, recordingIn woken: Recorder<Int>) -> [Task<Void, Never>] {
    [3, 1, 2].enumerated().map { index, seconds in
      Task {
        try? await clock.sleep(until: clock.now.advanced(by: .seconds(seconds)))
        woken.record(index)
      }
    }
  }

  @Test func sleepersWakeAtTheirDeadlinesInOrder() async throws {
    let clock = TestClock()
    let woken = Recorder<Int>()
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
    let woken = Recorder<Int>()
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
    let delays = Recorder<Duration>()
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
    let delays = Recorder<Duration>()
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

/// The worked test of the ProcessedTesting documentation (ProcessedTesting.docc/ProcessedTesting.md).
@MainActor
@Suite struct ProcessedTestingDocTests {
  /// The same view model as the TestingWithObservers article's.
  typealias SearchViewModel = DocExamples.TestingWithObserversDocs.SearchViewModel

  @Test func aSlowSearchTimesOut() async throws {
    let clock = TestClock()
    let model = SearchViewModel(clock: clock)
    let recorder = StateRecorder(model, \.results)

    let search = model.search("swift")
    try await clock.waitForSleepers(2)  // the block and the timeout are waiting
    clock.advance(by: .seconds(4))
    #expect(recorder.values == [.loading])
    clock.advance(by: .seconds(1))
    try await recorder.wait(forCount: 2)
    await search.value

    #expect(recorder.values == [.loading, .error(TimeoutError())])
  }

  @Test func aRecorderWaitThatIsNeverMetFails() async {
    @Loadable var numbers: LoadableState<Int>
    let recorder = StateRecorder($numbers)
    await #expect(throws: StateRecorder<LoadableState<Int>>.TimeLimitExceeded.self) {
      try await recorder.wait(forCount: 1, timeLimit: .milliseconds(20))
    }
    recorder.cancel()
    $numbers.reset()
    numbers = .loaded(1)
    #expect(recorder.values.isEmpty)
  }
}

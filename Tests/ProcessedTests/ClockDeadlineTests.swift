import ProcessedTesting
import Testing

@testable import Processed

/// Every wait the library makes sleeps until a deadline measured from a fixed origin, so a manual clock controls time
/// completely: advancing it past several deadlines at once wakes them all, and delays of any size are defined.
@MainActor
@Suite struct ClockDeadlineTests {
  @MainActor
  final class Model: ObservableModel {
    let observers = ObserverRegistry()
    @Loadable var numbers: LoadableState<Int>
  }

  static let twoDays = Duration.seconds(2 * 86_400)

  /// Starts a load with interrupts `[1 s, 2 s]` on `clock` whose block waits at `gate`; `fired` records each
  /// interrupt's accumulated delay.
  func startInterruptedLoad(
    of model: Model, on clock: TestClock, gate: Gate, fired: StateRecorder<Duration>
  ) -> Task<Void, Never> {
    model.$numbers.load(options: LoadOptions(clock: clock), interrupts: [.seconds(1), .seconds(2)]) {
      await gate.wait()
      return 1
    } onInterrupt: { accumulated in
      fired.record(accumulated)
    }
  }

  /// Interrupts `[1 s, 2 s]` fire at 1 s and 3 s whichever way the clock gets there: in one jump past both deadlines
  /// (a manual clock wakes every deadline it passes), or in two steps of 1.5 s (the second is due at 3 s, not at
  /// 1.5 s + 2 s: deadlines do not drift with the time between them). `steps` in milliseconds.
  @Test(arguments: [[3_000], [1_500, 1_500]])
  func interruptsFireAtTheirAccumulatedDeadlines(steps: [Int]) async throws {
    let clock = TestClock()
    let model = Model()
    let gate = Gate()
    let fired = StateRecorder<Duration>()
    let task = startInterruptedLoad(of: model, on: clock, gate: gate, fired: fired)
    for step in steps {
      try await clock.waitForSleepers(1)
      clock.advance(by: .milliseconds(step))
    }
    try await fired.wait(forCount: 2)
    #expect(fired.values == [.seconds(1), .seconds(3)])
    gate.open()
    await task.value
    #expect(model.numbers == .loaded(1))
  }

  /// Interrupts are measured from the moment the first attempt starts, not from whenever their task first runs: time
  /// that passes before it runs (here the block advances the clock before it first suspends, as a busy main actor
  /// would delay that task) counts.
  @Test func interruptsCountFromTheAttemptsStartNotFromWhenTheirTaskRuns() async throws {
    let clock = TestClock()
    let model = Model()
    let gate = Gate()
    let fired = StateRecorder<Duration>()
    let task: Task<Void, Never> = model.$numbers.load(options: LoadOptions(clock: clock), interrupts: [.seconds(1)]) {
      clock.advance(by: .seconds(1))  // before the interrupts' task has run at all
      await gate.wait()
      return 1
    } onInterrupt: { accumulated in
      fired.record(accumulated)
    }
    try await fired.wait(forCount: 1)  // with the clock never advanced again
    #expect(fired.values == [.seconds(1)])
    gate.open()
    await task.value
    #expect(model.numbers == .loaded(1))
  }

  /// A clock that suspends on every sleep, also until a deadline already passed, as `ContinuousClock` does.
  struct SuspendingClock: Clock {
    let base: TestClock
    var now: TestClock.Instant { base.now }
    var minimumResolution: Duration { base.minimumResolution }
    func sleep(until deadline: TestClock.Instant, tolerance: Duration?) async throws {
      await Task.yield()  // queued again behind whatever the main actor has queued meanwhile
      try await base.sleep(until: deadline, tolerance: tolerance)
    }
  }

  /// An interrupt whose deadline has already passed fires without sleeping: on a busy main actor, a sleep would queue
  /// it behind everything queued meanwhile (a 50 ms timeout interrupt could then come after the 10 s load it bounds).
  @Test func anInterruptWhoseDeadlineHasPassedFiresWithoutWaitingItsTurnAgain() async throws {
    let clock = TestClock()
    let model = Model()
    let gate = Gate()
    let fired = StateRecorder<Duration>()
    let options = LoadOptions(clock: SuspendingClock(base: clock))
    let task: Task<Void, Never> = model.$numbers.load(options: options, interrupts: [.seconds(1), .seconds(2)]) {
      await gate.wait()
      return 1
    } onInterrupt: { accumulated in
      fired.record(accumulated)
      // Queued on the main actor now: it runs after the second interrupt only if that one does not sleep.
      if accumulated == .seconds(1) { Task { @MainActor in fired.record(.zero) } }
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(3))  // past both deadlines
    try await fired.wait(forCount: 3)
    #expect(fired.values == [.seconds(1), .seconds(3), .zero])
    gate.open()
    await task.value
  }

  @Test func aDebounceLongerThanADayEndsWhenTheClockReachesIt() async throws {
    let clock = TestClock()
    let model = Model()
    let history = StateRecorder(model.$numbers)
    var runs = 0
    let task: Task<Void, Never> = model.$numbers.load(
      options: LoadOptions(debounce: .trailing(Self.twoDays), clock: clock)
    ) {
      runs += 1
      return 1
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: Self.twoDays)
    try await history.wait(forCount: 2)  // fails, rather than hangs, if the load waits on
    await task.value
    #expect(runs == 1)
    #expect(model.numbers == .loaded(1))
  }

  @Test func aTimeoutLongerThanADayEndsTheAttemptWhenTheClockReachesIt() async throws {
    let clock = TestClock()
    let model = Model()
    let history = StateRecorder(model.$numbers)
    let task: Task<Void, Never> = model.$numbers.load(options: LoadOptions(timeout: Self.twoDays, clock: clock)) {
      await untilCancelled()
      return 1
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: Self.twoDays)
    try await history.wait(forCount: 2)  // fails, rather than hangs, if the attempt runs on
    await task.value
    #expect(history.values == [.loading, .error(TimeoutError())])
  }

  @Test func aDebounceIsMeasuredFromTheCallNotFromWhenTheLoadBeganToWait() async throws {
    let clock = TestClock()
    let model = Model()
    let history = StateRecorder(model.$numbers)
    let task: Task<Void, Never> = model.$numbers.load(
      options: LoadOptions(debounce: .trailing(.seconds(1)), clock: clock)
    ) { 1 }
    clock.advance(by: .seconds(1))  // before the load's task has started to wait
    try await history.wait(forCount: 2)  // no further advance: the load started at the deadline
    await task.value
    #expect(history.values == [.loading, .loaded(1)])
  }

  /// A clock that jumps far ahead costs a long sleep one check, not one per day it jumped over: ten million years
  /// would otherwise be 3.65 billion checks, holding the sleeper's actor for minutes (the main actor, for a load's
  /// interrupt or timeout). A jump short of the deadline leaves the sleeper asleep, and time that has passed is not
  /// slept again.
  @Test func aSleepWokenByAJumpOfMillionsOfYearsChecksOnce() async throws {
    let clock = TestClock()
    let tenMillionYears = Duration.seconds(86_400 * 365 * 10_000_000)
    let ended = LockedBox(false)
    let sleeper = Task.detached {
      try await DeadlineSleep.sleep(for: tenMillionYears * 2, on: clock)
      ended.withLock { $0 = true }
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: tenMillionYears)
    try await clock.waitForSleepers(1)  // asleep again, until a day after the jump
    #expect(!ended.withLock { $0 })
    clock.advance(by: tenMillionYears)
    try await sleeper.value(timeLimit: .seconds(30))
    #expect(ended.withLock { $0 })
  }

  @Test func retryDelaysOfCenturiesAreDefinedAndCapped() {
    var generator = SystemRandomNumberGenerator()
    let centuries = Duration.seconds(10_000_000_000)  // about 317 years
    #expect(RetryPolicy.constant(centuries, maxRetries: 1).delay(beforeRetry: 1, using: &generator) == centuries)
    let endless = RetryPolicy.exponential(
      maxRetries: 5, initialDelay: .seconds(Int64.max), maxDelay: .seconds(Int64.max), jitter: .none)
    let delay = endless.delay(beforeRetry: 5, using: &generator)
    #expect(delay > centuries)
    #expect(delay <= DeadlineSleep.longest)
  }
}

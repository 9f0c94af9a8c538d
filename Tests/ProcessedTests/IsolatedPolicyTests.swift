import Processed
import ProcessedTesting
import Testing

@testable import Processed

/// The phase-2 options, activity, progress and the observer rules on an actor-owned state, all on the owner's
/// executor and a `TestClock`.
@Suite struct IsolatedPolicyTests {
  struct Failure: Error {}

  actor Owner {
    let executor = QueueExecutor("policies")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    @IsolatedLoadable var value: LoadableState<Int> = .absent
    var history: [LoadableState<Int>] = []
    var phases: [LoadActivity.Phase] = []
    var progress: [Double?] = []
    var runs = 0
    var interrupts: [Duration] = []
    var offExecutor = 0
    func check() { if !executor.isCurrent { offExecutor += 1 } }

    /// The observers capture the actor: their tokens are the caller's to keep, not the actor's (no cycle).
    func watch() -> [ObservationToken] {
      [
        $value.observe { state in
          self.check()
          self.history.append(state)
        },
        $value.observeActivity { activity in
          self.check()
          self.phases.append(activity.phase)
          if let progress = activity.progress { self.progress.append(progress.fraction) }
        },
      ]
    }

    @discardableResult
    func start(_ result: Int, options: LoadOptions, after gate: ActorGate? = nil) -> Task<Void, Never> {
      $value.load(options: options) {
        self.check()
        self.runs += 1
        await gate?.wait()
        return result
      }
    }
  }

  @Test func aTrailingDebounceRunsOnlyTheLastCall() async throws {
    let owner = Owner()
    let watching = await owner.watch()
    defer { withExtendedLifetime(watching) {} }
    let clock = TestClock()
    let options = LoadOptions(debounce: .trailing(.seconds(1)), clock: clock)
    let tasks = await owner.run { owner in (1...3).map { owner.start($0, options: options) } }
    #expect(await owner.run { $0.$value.activity.phase } == .debouncing)
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    for task in tasks { await task.value }
    #expect(await owner.runs == 1)
    #expect(await owner.history == [.loading, .loaded(3)])
    #expect(await owner.offExecutor == 0)
  }

  @Test func joinRunningJoinsTheLoadInProgress() async {
    let owner = Owner()
    let watching = await owner.watch()
    defer { withExtendedLifetime(watching) {} }
    let gate = ActorGate()
    let options = LoadOptions(overlap: .joinRunning)
    let first = await owner.start(1, options: options, after: gate)
    let joined = await owner.start(2, options: options, after: gate)
    gate.open()
    await joined.value
    #expect(await owner.history == [.loading, .loaded(1)])
    await first.value
    #expect(await owner.runs == 1)
  }

  @Test func aSharedLimiterQueuesLoadsOfTwoOwnersAndACancelledOneLeavesTheQueue() async {
    let limiter = LoadLimiter(maxConcurrent: 1)
    let options = LoadOptions(limiter: limiter)
    let (one, two) = (Owner(), Owner())
    let watching = await two.watch()
    defer { withExtendedLifetime(watching) {} }
    let gate = ActorGate()
    let running = await one.start(1, options: options, after: gate)
    await gate.untilWaiting(1)
    let queued = await two.start(2, options: options)
    #expect(await two.run { $0.$value.activity.phase } == .waiting)
    #expect(limiter.waiting == 1)
    await two.run { $0.$value.cancel() }
    #expect(limiter.waiting == 0)
    gate.open()
    await running.value
    await queued.value
    #expect(limiter.running == 0)
    #expect(await two.runs == 0)
    #expect(await two.history == [.loading])
  }

  @Test func aTimeoutEndsABlockThatIgnoresCancellation() async throws {
    let owner = Owner()
    let watching = await owner.watch()
    defer { withExtendedLifetime(watching) {} }
    let clock = TestClock()
    let gate = ActorGate()
    let task = await owner.start(1, options: LoadOptions(timeout: .seconds(5), clock: clock), after: gate)
    await gate.untilWaiting(1)
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(5))
    await task.value
    let history = await owner.history
    #expect(history.count == 2)
    #expect(history.last?.error is TimeoutError)
    gate.open()
    #expect(await owner.offExecutor == 0)
  }

  @Test func interruptsRunOnTheOwnerAtAccumulatedDelays() async throws {
    let owner = Owner()
    let clock = TestClock()
    let gate = ActorGate()
    let task = await owner.run { owner in
      owner.$value.load(options: LoadOptions(clock: clock), interrupts: [.seconds(1), .seconds(2)]) {
        await gate.wait()
        return 1
      } onInterrupt: { delay in
        owner.check()
        owner.interrupts.append(delay)
        if delay == .seconds(3) {
          gate.open()  // the block returns after the load ended: its result is never written
          throw Failure()
        }
      }
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(2))
    await task.value
    #expect(await owner.interrupts == [.seconds(1), .seconds(3)])
    #expect(await owner.value.error is Failure)
    #expect(await owner.offExecutor == 0)
  }

  @Test func aBlockThatCapturesNothingOfTheActorRunsOnItsExecutor() async {
    let owner = Owner()
    let executor = owner.executor
    let ranOnExecutor = await owner.run { owner in
      owner.$value.load { executor.isCurrent ? 1 : 0 }
    }
    await ranOnExecutor.value
    #expect(await owner.value == .loaded(1))
  }

  /// Reports progress from another actor, inside the same task (task-locals flow there): dropped.
  actor Elsewhere {
    func report() { LoadProgress.report(fraction: 0.9) }
  }

  @Test func progressFromTheBlockIsKeptAndFromAnotherActorDropped() async {
    let owner = Owner()
    let watching = await owner.watch()
    defer { withExtendedLifetime(watching) {} }
    let elsewhere = Elsewhere()
    await owner.run { owner in
      // A block that captures nothing of the actor runs on it too (its type is `nonisolated(nonsending)`).
      owner.$value.load {
        LoadProgress.report(fraction: 0.5)
        await elsewhere.report()
        LoadProgress.report(fraction: 0.75)
        return 1
      }
    }.value
    #expect(await owner.progress == [0.5, 0.75])
    #expect(await owner.phases == [.running(attempt: 1), .running(attempt: 1), .running(attempt: 1), .idle])
  }

  @Test func observersAreCalledInOrderAndAChangeMadeByAnObserverWaitsItsTurn() async {
    let owner = Owner()
    let log = await owner.run { owner -> [String] in
      var log: [String] = []
      var late: ObservationToken?
      let first = owner.$value.observe { state in
        log.append("first \(state)")
        if state == .loaded(1) {
          late = owner.$value.observe { log.append("late \($0)") }  // not called for .loaded(1)
          owner.value = .loaded(2)  // delivered after every observer saw .loaded(1)
        }
      }
      let second = owner.$value.observe { log.append("second \($0)") }
      owner.value = .loaded(1)
      withExtendedLifetime((first, second, late)) {}
      return log
    }
    #expect(
      log == [
        "first LoadableState.loaded(1)", "second LoadableState.loaded(1)", "first LoadableState.loaded(2)",
        "second LoadableState.loaded(2)", "late LoadableState.loaded(2)",
      ])
  }

  @Test func aCancelledTokenIsNeverCalledAgainAlsoFromItsOwnHandler() async {
    let owner = Owner()
    let calls = await owner.run { owner -> Int in
      var calls = 0
      var token: ObservationToken?
      token = owner.$value.observe { _ in
        calls += 1
        token?.cancel()
      }
      owner.value = .loaded(1)
      owner.value = .loaded(2)
      return calls
    }
    #expect(calls == 1)
  }

  @Test func aTokenCancelledFromAnotherThreadIsNeverCalledAgain() async {
    let owner = Owner()
    let token = await owner.run { owner in
      owner.$value.observe { state in owner.history.append(state) }
    }
    await owner.run { $0.value = .loaded(1) }
    token.cancel()  // here, off the owner's executor
    await owner.run { $0.value = .loaded(2) }
    #expect(await owner.history == [.loaded(1)])
  }

  @Test func statesBufferEveryChangeInOrder() async {
    let owner = Owner()
    let stream = await owner.run { owner in
      let stream = owner.$value.states
      for value in 1...100 { owner.value = .loaded(value) }
      return stream
    }
    var seen: [LoadableState<Int>] = []
    for await state in stream {
      seen.append(state)
      if seen.count == 101 { break }
    }
    #expect(seen == [.absent] + (1...100).map { .loaded($0) })
  }
}

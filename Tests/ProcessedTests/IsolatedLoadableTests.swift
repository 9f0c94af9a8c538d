import Dispatch
import Processed
import ProcessedTesting
import Testing

@testable import Processed

/// Actor-owned states (`@IsolatedLoadable`, `@IsolatedProcess`): every piece of user code on the owning actor's
/// executor, and the phase-1 and phase-2 rules with "the owning actor" for "the main actor".
@Suite struct IsolatedLoadableTests {
  struct Failure: Error, Equatable {}

  @Test func blockWritesAndObserversRunOnTheOwnersExecutor() async {
    let owner = FeedOwner()
    await owner.observeAll()
    await owner.load(1)
    let (history, off, state) = await owner.run { ($0.history, $0.offExecutor, $0.feed) }
    #expect(history == [.loading, .loaded(1)])
    #expect(state == .loaded(1))
    #expect(off == 0)
  }

  @Test func theStartStateIsWrittenBeforeTheCallReturns() async {
    let owner = FeedOwner()
    let gate = ActorGate()
    let seen = await owner.run { owner in
      owner.startLoad(1, after: gate)
      return owner.feed
    }
    #expect(seen == .loading)
    gate.open()
  }

  @Test func theLatestLoadWinsAndASupersededResultIsNeverWritten() async {
    let owner = FeedOwner()
    await owner.observeAll()
    let first = ActorGate()
    let second = ActorGate()
    let (a, b) = await owner.run { owner in
      (owner.startLoad(1, after: first), owner.startLoad(2, after: second))
    }
    await first.untilWaiting(1)
    first.open()  // the superseded block returns first: its result must not be written
    await a.value
    #expect(await owner.state == .loading)
    second.open()
    await b.value
    #expect(await owner.history == [.loading, .loaded(2)])
  }

  @Test func cancelStopsTheLoadAndTheStateStays() async {
    let owner = FeedOwner()
    await owner.observeAll()
    let gate = ActorGate()
    let task = await owner.startLoad(1, after: gate)
    await gate.untilWaiting(1)
    await owner.cancel()
    #expect(await owner.run { $0.$feed.activity.phase } == .idle)
    gate.open()
    await task.value
    #expect(await owner.history == [.loading])
  }

  @Test func resetWritesAbsentAndTheLoadNeverWrites() async {
    let owner = FeedOwner()
    await owner.observeAll()
    let gate = ActorGate()
    let task = await owner.startLoad(1, after: gate)
    await gate.untilWaiting(1)
    await owner.reset()
    gate.open()
    await task.value
    #expect(await owner.history == [.loading, .absent])
  }

  @Test func anAsyncCallerCancelledByItsTaskReturnsWithoutWaitingForTheBlock() async {
    let owner = FeedOwner()
    await owner.observeAll()
    let gate = ActorGate()
    let caller = Task { await owner.load(1, after: gate) }
    await gate.untilWaiting(1)
    caller.cancel()
    await caller.value  // returns although the block still waits at the gate
    #expect(gate.waiting == 1)
    gate.open()
    // A newer load runs after the cancelled one's block returned: nothing of the old one is ever written.
    await owner.load(2)
    #expect(await owner.history == [.loading, .loaded(2)])
  }

  @Test(arguments: [false, true])
  func anAsyncCallerCancelledBeforeItCallsCancelsItsLoadAndReturns(whileAnotherLoadRuns: Bool) async {
    let owner = FeedOwner()
    await owner.observeAll()
    let gate = ActorGate()
    if whileAnotherLoadRuns {
      await owner.startLoad(0, after: gate)
      await gate.untilWaiting(1)
    }
    let caller = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      await owner.load(1, after: gate)
    }
    await caller.value  // returns although its block may wait at the gate: its load was cancelled
    #expect(await owner.run { $0.$feed.activity.phase } == .idle)
    #expect(await owner.state == .loading)
    gate.open()
    await owner.load(2)
    #expect(await owner.history == [.loading, .loaded(2)])
  }

  @Test func anAsyncLoadStartedInsideTheBlockWaitsForItsOwnLoadThoughItSupersededItsCaller() async {
    let owner = FeedOwner()
    await owner.observeAll()
    let seenByTheOuterBlock = await owner.loadNested()
    // The inner call cancelled the outer load's task (its own caller's) and still ran to its end; the outer block's
    // result is never written.
    #expect(seenByTheOuterBlock == .loaded(2))
    #expect(await owner.history == [.loading, .loaded(2)])
    #expect(await owner.offExecutor == 0)
  }

  @Test func anAsyncCallerReturnsWhenANewerLoadCancelOrResetStopsItsLoad() async {
    let owner = FeedOwner()
    let gate = ActorGate()
    for stop in 0..<3 {
      let caller = Task { await owner.load(stop, after: gate) }
      await gate.untilWaiting(stop + 1)
      switch stop {
      case 0: await owner.startLoad(10)
      case 1: await owner.cancel()
      default: await owner.reset()
      }
      await caller.value
    }
    gate.open()
  }

  @Test func anAsyncCallerWhoseLoadAnObserverCancelsAtItsStartReturnsAtOnce() async {
    let owner = FeedOwner()
    let gate = ActorGate()
    let token = await owner.run { owner in
      owner.$feed.observe { state in
        if state == .loading { owner.$feed.cancel() }
      }
    }
    await owner.load(1, after: gate)  // returns although the block still waits at the gate
    #expect(await owner.state == .loading)
    gate.open()
    withExtendedLifetime(token) {}
  }

  @Test func anAsyncJoiningCallReturnsWhenTheLoadItJoinedEnds() async {
    let owner = FeedOwner()
    await owner.observeAll()
    let gate = ActorGate()
    let options = LoadOptions(overlap: .joinRunning)
    let first = await owner.startLoad(1, after: gate, options: options)
    await gate.untilWaiting(1)
    // The second call announces itself and joins in one job of the owner: once announced, it has joined (the first
    // load, held at the gate, can only end in a later job).
    let (arrivals, arrival) = AsyncStream<Void>.makeStream()
    let joined = Task { await owner.load(2, options: options, announcing: arrival) }
    for await _ in arrivals { break }
    gate.open()
    await joined.value
    await first.value
    #expect(await owner.history == [.loading, .loaded(1)])
  }

  @Test func yieldsWriteInOrderOnTheOwnerAndStopWhenSuperseded() async {
    let owner = FeedOwner()
    await owner.observeAll()
    let gate = ActorGate()
    let task = await owner.run { owner in
      owner.$feed.load { yield in
        owner.check()
        yield(.loaded(1))
        await gate.wait()
        yield(.loaded(2))
      }
    }
    await gate.untilWaiting(1)
    await owner.run { $0.feed = .loaded(7) }  // a manual write supersedes the load
    gate.open()
    await task.value
    #expect(await owner.history == [.loading, .loaded(1), .loaded(7)])
    #expect(await owner.offExecutor == 0)
  }

  @Test func failuresControlErrorsAndRefresh() async {
    let owner = FeedOwner()
    await owner.observeAll()
    await owner.run { owner in
      owner.$feed.load { throw Failure() }
    }.value
    #expect(await owner.state.error is Failure)
    await owner.run { $0.feed = .loaded(1) }
    // A refresh of a value keeps it when it fails, and keeps the error in the activity.
    await owner.run { owner in owner.$feed.refresh { throw Failure() } }.value
    #expect(await owner.state == .loaded(1))
    #expect(await owner.run { $0.$feed.activity.lastError } is Failure)
    #expect(await owner.run { $0.$feed.lastValue } == 1)
    // CancelLoadable acts as cancel(); ResetLoadable as reset().
    await owner.run { owner in owner.$feed.load { throw CancelLoadable() } }.value
    #expect(await owner.state == .loading)
    await owner.run { owner in owner.$feed.load { throw ResetLoadable() } }.value
    #expect(await owner.state == .absent)
    #expect(await owner.run { $0.$feed.lastValue } == nil)
  }

  @Test func processesRunOnTheOwner() async {
    let owner = FeedOwner()
    await owner.observeAll()
    await owner.run { owner in
      owner.$job.run { owner.check() }
    }.value
    await owner.run { owner in owner.$job.run { throw Failure() } }.value
    let history = await owner.jobHistory
    #expect(history.map(\.isRunning) == [true, false, true, false])
    #expect(history.map(\.hasFinished) == [false, true, false, false])
    #expect(history.last?.hasFailed == true)
    #expect(await owner.offExecutor == 0)
  }

  @Test func statesStartWithTheCurrentStateAndEndWithTheActor() async {
    var owner: FeedOwner? = FeedOwner()
    let stream = await owner!.run { $0.$feed.states }
    await owner!.load(1)
    owner = nil  // no load runs: releasing the actor ends the sequence
    var seen: [LoadableState<Int>] = []
    for await state in stream { seen.append(state) }
    #expect(seen == [.absent, .loading, .loaded(1)])
  }

  @Test func optionsRetryAndTimeoutRunOnTheOwnersClock() async throws {
    let owner = FeedOwner()
    await owner.observeAll()
    let clock = TestClock()
    let attempts = await owner.run { owner -> Task<Void, Never> in
      var count = 0
      return owner.$feed.load(
        options: LoadOptions(retry: .exponential(maxRetries: 2, initialDelay: .seconds(1), jitter: .none), clock: clock)
      ) {
        owner.check()
        count += 1
        if count < 3 { throw Failure() }
        return count
      }
    }
    try await clock.waitForSleepers(1)
    #expect(await owner.run { $0.$feed.activity.phase } == .retrying(attempt: 2))
    clock.advance(by: .seconds(1))
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(2))
    await attempts.value
    #expect(await owner.history == [.loading, .loaded(3)])
    #expect(await owner.offExecutor == 0)
  }

  @Test func aStateIsPinnedToItsFirstActorAndItsPropertiesWorkBeforeThat() async {
    let owner = FeedOwner()
    // Before the first call that takes `isolation:`, anyone may read and write the wrapped value.
    let wrapper = IsolatedLoadable<Int>(wrappedValue: .loaded(1))
    #expect(wrapper.wrappedValue == .loaded(1))
    wrapper.wrappedValue = .loaded(2)
    #expect(wrapper.storage.ownerID == nil)
    await owner.observeAll()
    #expect(await owner.feedOwnerID == ObjectIdentifier(owner))
  }
}

extension Actor {
  /// Runs `body` on the actor.
  func run<T: Sendable>(_ body: @Sendable (isolated Self) async -> T) async -> T {
    await body(self)
  }
}

@Suite struct IsolatedLifetimeTests {
  @Test func aRunningLoadKeepsItsActorAliveUntilItEnds() async {
    let gate = ActorGate()
    var owner: FeedOwner? = FeedOwner()
    weak let released = owner
    let task = await owner!.startLoad(1, after: gate)
    await gate.untilWaiting(1)
    owner = nil
    #expect(released != nil)  // the load's task holds it
    gate.open()
    await task.value
    #expect(released == nil)
  }
}

extension FeedOwner {
  /// An `async` load whose block starts another `async` load of the same state and returns `1` after it.
  /// Announces the call through `arrival`, then loads `value` and waits, in the same job of the owner up to the load's
  /// start (a joining call has joined when the announcement is read).
  func load(_ value: Int, options: LoadOptions?, announcing arrival: AsyncStream<Void>.Continuation) async {
    arrival.yield()
    await $feed.load(options: options) { value }
  }

  /// Returns the state the inner call returned to, once the outer block has ended too. (The outer caller returns
  /// as soon as the inner load supersedes its load, before the inner load ends.)
  func loadNested() async -> LoadableState<Int>? {
    let (ended, end) = AsyncStream<LoadableState<Int>>.makeStream()
    await $feed.load {
      self.check()
      await self.$feed.load { 2 }
      self.check()
      end.yield(self.feed)
      end.finish()
      return 1
    }
    for await seen in ended { return seen }
    return nil
  }
}

import Dispatch
import Processed
import ProcessedTesting
import Testing

@testable import Processed

// Black-box parity: an actor-owned state (`@IsolatedLoadable` in an `actor`, through `$x`) against a main-actor state
// (`@Loadable` in a `@MainActor` class), run through the same scenario on the same kind of `TestClock`. Each test
// expects the two observer histories to be equal and to match what the doc comments promise.

struct ParityFailure: Error, Equatable {}

/// What a block does: optionally waits at a gate, optionally sleeps on a clock, then returns `result` or throws.
struct ParityWork: Sendable {
  var gate: ActorGate? = nil
  var clock: TestClock? = nil
  var sleep: Duration? = nil
  /// `nil`: throws `ParityFailure`.
  var result: Int?

  nonisolated(nonsending) func run() async throws -> Int {
    if let gate { await gate.wait() }
    if let clock, let sleep { try await clock.sleep(for: sleep) }
    guard let result else { throw ParityFailure() }
    return result
  }
}

/// A page fetch: records the cursor asked for, waits at an optional gate, returns `[cursor * 10]` or throws.
struct ParityPageWork: Sendable {
  var gate: ActorGate? = nil
  var fails = false
  let cursors = LockedBox<[Int]>([])

  nonisolated(nonsending) func run(_ cursor: Int) async throws -> Pages<Int, Int> {
    cursors.withLock { $0.append(cursor) }
    if let gate { await gate.wait() }
    if fails { throw ParityFailure() }
    return Pages(items: [cursor * 10], nextCursor: cursor < 3 ? cursor + 1 : nil)
  }
}

/// The operations every scenario drives, on either owner.
protocol ParityFace: AnyObject, Sendable {
  func observe() async
  func history() async -> [LoadableState<Int>]
  func listHistory() async -> [LoadableState<Pages<Int, Int>>]
  func state() async -> LoadableState<Int>
  func listState() async -> LoadableState<Pages<Int, Int>>
  func lastErrorIsFailure() async -> Bool
  func isActive() async -> Bool
  func offOwner() async -> Int
  func write(_ state: LoadableState<Int>) async
  func writeList(_ state: LoadableState<Pages<Int, Int>>) async
  func load(_ work: ParityWork, options: LoadOptions?) async -> Task<Void, Never>
  func loadAwaiting(_ work: ParityWork, options: LoadOptions?) async
  func refresh(_ work: ParityWork, options: LoadOptions?) async -> Task<Void, Never>
  func refreshAwaiting(_ work: ParityWork, options: LoadOptions?) async
  func refreshCached(_ key: CacheKey<Int>, _ work: ParityWork, options: LoadOptions?) async -> Task<Void, Never>
  func loadMore(_ work: ParityPageWork) async -> Task<Void, Never>
  func loadMoreAwaiting(_ work: ParityPageWork) async
  func cancel() async
  func reset() async
}

@MainActor
final class MainParityOwner: ParityFace {
  @Loadable var x: LoadableState<Int>
  @Loadable var list: LoadableState<Pages<Int, Int>>
  let cache: LoadCache
  var seen: [LoadableState<Int>] = []
  var seenList: [LoadableState<Pages<Int, Int>>] = []
  var tokens: [ObservationToken] = []

  init(cache: LoadCache) { self.cache = cache }

  func observe() {
    tokens.append($x.observe { [weak self] in self?.seen.append($0) })
    tokens.append($list.observe { [weak self] in self?.seenList.append($0) })
  }
  func history() -> [LoadableState<Int>] { seen }
  func listHistory() -> [LoadableState<Pages<Int, Int>>] { seenList }
  func state() -> LoadableState<Int> { x }
  func listState() -> LoadableState<Pages<Int, Int>> { list }
  func lastErrorIsFailure() -> Bool {
    $x.activity.lastError is ParityFailure || $list.activity.lastError is ParityFailure
  }
  func isActive() -> Bool { $x.activity.isActive || $list.activity.isActive }
  func offOwner() -> Int { 0 }
  func write(_ state: LoadableState<Int>) { x = state }
  func writeList(_ state: LoadableState<Pages<Int, Int>>) { list = state }
  func load(_ work: ParityWork, options: LoadOptions?) -> Task<Void, Never> {
    $x.load(options: options) { try await work.run() }
  }
  func loadAwaiting(_ work: ParityWork, options: LoadOptions?) async {
    await $x.load(options: options) { try await work.run() }
  }
  func refresh(_ work: ParityWork, options: LoadOptions?) -> Task<Void, Never> {
    $x.refresh(options: options) { try await work.run() }
  }
  func refreshAwaiting(_ work: ParityWork, options: LoadOptions?) async {
    await $x.refresh(options: options) { try await work.run() }
  }
  func refreshCached(_ key: CacheKey<Int>, _ work: ParityWork, options: LoadOptions?) -> Task<Void, Never> {
    $x.refresh(key, in: cache, options: options) { try await work.run() }
  }
  func loadMore(_ work: ParityPageWork) -> Task<Void, Never> {
    $list.loadMore { (cursor: Int) in try await work.run(cursor) }
  }
  func loadMoreAwaiting(_ work: ParityPageWork) async {
    await $list.loadMore { (cursor: Int) in try await work.run(cursor) }
  }
  func cancel() {
    $x.cancel()
    $list.cancel()
  }
  func reset() {
    $x.reset()
    $list.reset()
  }
}

/// What the actor's observers saw, and how often user code ran off the owner's executor.
final class ParitySeen {
  let executor: QueueExecutor
  var states: [LoadableState<Int>] = []
  var list: [LoadableState<Pages<Int, Int>>] = []
  var offOwner = 0
  init(_ executor: QueueExecutor) { self.executor = executor }
  func check() { if !executor.isCurrent { offOwner += 1 } }
}

actor ActorParityOwner: ParityFace {
  let executor: QueueExecutor
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
  @IsolatedLoadable var x: LoadableState<Int> = .absent
  @IsolatedLoadable var list: LoadableState<Pages<Int, Int>> = .absent
  let cache: LoadCache
  let seen: ParitySeen
  var tokens: [ObservationToken] = []

  init(cache: LoadCache) {
    self.cache = cache
    executor = QueueExecutor("parity-owner")
    seen = ParitySeen(executor)
  }

  func observe() {
    let seen = seen
    tokens.append(
      $x.observe { state in
        seen.check()
        seen.states.append(state)
      })
    tokens.append(
      $list.observe { state in
        seen.check()
        seen.list.append(state)
      })
  }
  func history() -> [LoadableState<Int>] { seen.states }
  func listHistory() -> [LoadableState<Pages<Int, Int>>] { seen.list }
  func state() -> LoadableState<Int> { x }
  func listState() -> LoadableState<Pages<Int, Int>> { list }
  func lastErrorIsFailure() -> Bool {
    $x.activity.lastError is ParityFailure || $list.activity.lastError is ParityFailure
  }
  func isActive() -> Bool { $x.activity.isActive || $list.activity.isActive }
  func offOwner() -> Int { seen.offOwner }
  func write(_ state: LoadableState<Int>) { x = state }
  func writeList(_ state: LoadableState<Pages<Int, Int>>) { list = state }
  func load(_ work: ParityWork, options: LoadOptions?) -> Task<Void, Never> {
    let seen = seen
    return $x.load(options: options) {
      seen.check()
      return try await work.run()
    }
  }
  func loadAwaiting(_ work: ParityWork, options: LoadOptions?) async {
    let seen = seen
    await $x.load(options: options) {
      seen.check()
      return try await work.run()
    }
  }
  func refresh(_ work: ParityWork, options: LoadOptions?) -> Task<Void, Never> {
    let seen = seen
    return $x.refresh(options: options) {
      seen.check()
      return try await work.run()
    }
  }
  func refreshAwaiting(_ work: ParityWork, options: LoadOptions?) async {
    let seen = seen
    await $x.refresh(options: options) {
      seen.check()
      return try await work.run()
    }
  }
  func refreshCached(_ key: CacheKey<Int>, _ work: ParityWork, options: LoadOptions?) -> Task<Void, Never> {
    let seen = seen
    return $x.refresh(key, in: cache, options: options) {
      seen.check()
      return try await work.run()
    }
  }
  func loadMore(_ work: ParityPageWork) -> Task<Void, Never> {
    let seen = seen
    return $list.loadMore { (cursor: Int) in
      seen.check()
      return try await work.run(cursor)
    }
  }
  func loadMoreAwaiting(_ work: ParityPageWork) async {
    let seen = seen
    await $list.loadMore { (cursor: Int) in
      seen.check()
      return try await work.run(cursor)
    }
  }
  func cancel() {
    $x.cancel()
    $list.cancel()
  }
  func reset() {
    $x.reset()
    $list.reset()
  }
}

/// Polls `condition` with `Task.yield()` until it holds, for at most `timeLimit` of real time (a hang limit, never
/// an ordering device); records an issue when it never held.
@discardableResult
func parityEventually(
  _ what: String, timeLimit: Duration = .seconds(300), sourceLocation: SourceLocation = #_sourceLocation,
  _ condition: @Sendable () async -> Bool
) async -> Bool {
  let start = ContinuousClock.now
  while ContinuousClock.now - start < timeLimit {
    if await condition() { return true }
    await Task.yield()
  }
  Issue.record("not reached within \(timeLimit): \(what)", sourceLocation: sourceLocation)
  return false
}

/// Runs an async operation with a real-time hang limit.
func parityWithin<T: Sendable>(
  _ timeLimit: Duration = .seconds(300), _ operation: @escaping @Sendable () async -> T
) async throws -> T {
  try await Task { await operation() }.value(timeLimit: timeLimit)
}

enum ParitySide: String, Sendable { case main, actor }

/// Runs `scenario` on a main-actor owner and on an actor owner (fresh clock and cache each) and returns both
/// histories of `x`.
func parityRun(
  _ scenario: @escaping @Sendable (any ParityFace, TestClock, ParitySide) async throws -> Void
) async throws -> (main: [LoadableState<Int>], actor: [LoadableState<Int>]) {
  var results: [[LoadableState<Int>]] = []
  for side in [ParitySide.main, .actor] {
    let clock = TestClock()
    let cache = LoadCache(staleTime: .seconds(3_600), clock: clock)
    let face: any ParityFace =
      side == .main ? await MainActor.run { MainParityOwner(cache: cache) } : ActorParityOwner(cache: cache)
    await face.observe()
    try await scenario(face, clock, side)
    results.append(await face.history())
    #expect(await face.offOwner() == 0, "user code ran off the owner (\(side))")
  }
  return (results[0], results[1])
}

@Suite struct ActorFaceParityTests {
  static func calm(
    delay: Duration? = nil, minimum: Duration? = nil, restore: Bool = false, clock: TestClock
  ) -> LoadOptions {
    LoadOptions(
      loadingDelay: delay, minimumLoadingTime: minimum, cancellation: restore ? .restorePreviousState : .keepState,
      clock: clock)
  }

  // MARK: loadingDelay

  @Test func aQuickAnswerWithinTheDelayIsWrittenAlone() async throws {
    let (main, actor) = try await parityRun { face, clock, _ in
      let task = await face.load(
        ParityWork(clock: clock, sleep: .milliseconds(200), result: 1),
        options: Self.calm(delay: .milliseconds(300), clock: clock))
      try await clock.waitForSleepers(2)  // the fetch and the loading delay
      clock.advance(by: .milliseconds(200))
      try await task.value(timeLimit: .seconds(300))
    }
    #expect(main == [.loaded(1)])
    #expect(actor == main)
  }

  @Test func aSlowAnswerShowsTheSpinnerAfterTheDelay() async throws {
    let (main, actor) = try await parityRun { face, clock, _ in
      let task = await face.load(
        ParityWork(clock: clock, sleep: .milliseconds(400), result: 1),
        options: Self.calm(delay: .milliseconds(300), clock: clock))
      try await clock.waitForSleepers(2)
      clock.advance(by: .milliseconds(299))
      #expect(await face.state() == .absent)
      clock.advance(by: .milliseconds(1))
      await parityEventually("spinner after the delay") { await face.state() == .loading }
      clock.advance(by: .milliseconds(100))
      try await task.value(timeLimit: .seconds(300))
    }
    #expect(main == [.loading, .loaded(1)])
    #expect(actor == main)
  }

  // MARK: minimumLoadingTime

  @Test func theMinimumHoldsTheResultAndTheTaskAndAsyncCallerWait() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      let options = Self.calm(delay: .milliseconds(300), minimum: .milliseconds(500), clock: clock)
      let done = LockedBox(false)
      let caller = Task {
        await face.loadAwaiting(ParityWork(clock: clock, sleep: .milliseconds(400), result: 1), options: options)
        done.withLock { $0 = true }
      }
      try await clock.waitForSleepers(2)
      clock.advance(by: .milliseconds(300))
      await parityEventually("spinner at 300 ms (\(side))") { await face.state() == .loading }
      clock.advance(by: .milliseconds(100))  // the answer at 400 ms is held until 800 ms
      try await clock.waitForSleepers(1)
      #expect(await face.state() == .loading, "held result written early (\(side))")
      #expect(await face.isActive(), "a held load is still running (\(side))")
      #expect(!done.withLock { $0 }, "async caller returned while the result was held (\(side))")
      clock.advance(by: .milliseconds(399))
      #expect(await face.state() == .loading)
      clock.advance(by: .milliseconds(1))
      try await caller.value(timeLimit: .seconds(300))
      #expect(await face.state() == .loaded(1))
    }
    #expect(main == [.loading, .loaded(1)])
    #expect(actor == main)
  }

  @Test func aFailureIsHeldLikeAValue() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      let options = Self.calm(minimum: .milliseconds(500), clock: clock)
      let task = await face.load(ParityWork(clock: clock, sleep: .milliseconds(100), result: nil), options: options)
      try await clock.waitForSleepers(1)  // the fetch (no delay: the start state is written at once)
      await parityEventually("spinner at once (\(side))") { await face.state() == .loading }
      clock.advance(by: .milliseconds(100))
      try await clock.waitForSleepers(1)  // the hold
      #expect(await face.state() == .loading)
      clock.advance(by: .milliseconds(400))
      try await task.value(timeLimit: .seconds(300))
    }
    #expect(main == [.loading, .error(ParityFailure())])
    #expect(actor == main)
  }

  @Test func resetDuringTheHoldActsAtOnceAndTheHeldResultIsNeverWritten() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      let options = Self.calm(minimum: .milliseconds(500), clock: clock)
      let task = await face.load(ParityWork(clock: clock, sleep: .milliseconds(100), result: 1), options: options)
      try await clock.waitForSleepers(1)
      await parityEventually("spinner (\(side))") { await face.state() == .loading }
      clock.advance(by: .milliseconds(100))
      try await clock.waitForSleepers(1)
      await face.reset()
      #expect(await face.state() == .absent)
      try await task.value(timeLimit: .seconds(300))
      clock.advance(by: .seconds(5))
      #expect(await face.state() == .absent)
    }
    #expect(main == [.loading, .absent])
    #expect(actor == main)
  }

  @Test func cancelDuringTheHoldKeepsTheSpinnerWithKeepState() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      let options = Self.calm(minimum: .milliseconds(500), clock: clock)
      let task = await face.load(ParityWork(clock: clock, sleep: .milliseconds(100), result: 1), options: options)
      try await clock.waitForSleepers(1)
      await parityEventually("spinner (\(side))") { await face.state() == .loading }
      clock.advance(by: .milliseconds(100))
      try await clock.waitForSleepers(1)
      await face.cancel()
      try await task.value(timeLimit: .seconds(300))
      clock.advance(by: .seconds(5))
      #expect(await face.state() == .loading)
    }
    #expect(main == [.loading])
    #expect(actor == main)
  }

  // MARK: cancellation: .restorePreviousState

  @Test func cancelWhileTheSpinnerIsUpRestoresThePreviousValue() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      await face.write(.loaded(7))
      let gate = ActorGate()
      let task = await face.load(ParityWork(gate: gate, result: 1), options: Self.calm(restore: true, clock: clock))
      _ = try await parityWithin { await gate.untilWaiting(1) }
      await parityEventually("spinner (\(side))") { await face.state() == .loading }
      await face.cancel()
      #expect(await face.state() == .loaded(7), "cancel() acts at once (\(side))")
      gate.open()
      try await task.value(timeLimit: .seconds(300))
    }
    #expect(main == [.loaded(7), .loading, .loaded(7)])
    #expect(actor == main)
  }

  @Test func cancelWithinTheDelayWritesNothing() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      await face.write(.loaded(7))
      let gate = ActorGate()
      let task = await face.load(
        ParityWork(gate: gate, result: 1), options: Self.calm(delay: .milliseconds(300), restore: true, clock: clock))
      _ = try await parityWithin { await gate.untilWaiting(1) }
      try await clock.waitForSleepers(1)  // the loading delay has reached its clock
      await face.cancel()
      gate.open()
      try await task.value(timeLimit: .seconds(300))
      clock.advance(by: .seconds(1))
      #expect(await face.state() == .loaded(7), "(\(side))")
    }
    #expect(main == [.loaded(7)])
    #expect(actor == main)
  }

  @Test func cancellingTheLoadsTaskRestoresWhenTheBlockStops() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      await face.write(.loaded(7))
      let task = await face.load(
        ParityWork(clock: clock, sleep: .seconds(10), result: 1), options: Self.calm(restore: true, clock: clock))
      try await clock.waitForSleepers(1)
      await parityEventually("spinner (\(side))") { await face.state() == .loading }
      task.cancel()
      try await task.value(timeLimit: .seconds(300))
      let restored = await parityEventually("restored (\(side))", timeLimit: .seconds(20)) {
        await face.state() == .loaded(7)
      }
      if !restored {
        // Diagnostics: is the block still sleeping (the load not cancelled), and does it still write its result?
        Issue.record("\(side): sleepers after the Task was cancelled: \(clock.sleeperCount)")
        clock.advance(by: .seconds(10))
        _ = await parityEventually("\(side): settled", timeLimit: .seconds(5)) { await face.state() != .loading }
        Issue.record("\(side): state after advancing past the block's sleep: \(await face.state())")
      }
    }
    #expect(main == [.loaded(7), .loading, .loaded(7)])
    #expect(actor == main)
  }

  @Test func resetWithRestoreIsNotACancellation() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      await face.write(.loaded(7))
      let gate = ActorGate()
      let task = await face.load(ParityWork(gate: gate, result: 1), options: Self.calm(restore: true, clock: clock))
      _ = try await parityWithin { await gate.untilWaiting(1) }
      await parityEventually("spinner (\(side))") { await face.state() == .loading }
      await face.reset()
      gate.open()
      try await task.value(timeLimit: .seconds(300))
      #expect(await face.state() == .absent)
    }
    #expect(main == [.loaded(7), .loading, .absent])
    #expect(actor == main)
  }

  @Test func aNewerLoadSupersedingASpinnerThenCancelledRestoresWhatTheFirstReplaced() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      await face.write(.loaded(7))
      let gate = ActorGate()
      let options = Self.calm(restore: true, clock: clock)
      let first = await face.load(ParityWork(gate: gate, result: 1), options: options)
      _ = try await parityWithin { await gate.untilWaiting(1) }
      await parityEventually("spinner (\(side))") { await face.state() == .loading }
      let second = await face.load(ParityWork(gate: gate, result: 2), options: options)
      _ = try await parityWithin { await gate.untilWaiting(2) }
      await face.cancel()
      gate.open()
      try await first.value(timeLimit: .seconds(300))
      try await second.value(timeLimit: .seconds(300))
      #expect(await face.state() == .loaded(7), "(\(side))")
    }
    #expect(main.first == .loaded(7) && main.last == .loaded(7))
    #expect(actor == main)
  }

  // MARK: refresh

  @Test func refreshKeepsTheValueAndAFailureGoesToTheActivity() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      await face.write(.loaded(1))
      let gate = ActorGate()
      let task = await face.refresh(ParityWork(gate: gate, result: 2), options: nil)
      _ = try await parityWithin { await gate.untilWaiting(1) }
      #expect(await face.state() == .loaded(1), "no .loading for a refresh (\(side))")
      gate.open()
      try await task.value(timeLimit: .seconds(300))
      try await parityWithin { await face.refreshAwaiting(ParityWork(result: nil), options: nil) }
      #expect(await face.state() == .loaded(2), "a failed refresh keeps the value (\(side))")
      #expect(await face.lastErrorIsFailure(), "the failure is kept in the activity (\(side))")
    }
    #expect(main == [.loaded(1), .loaded(2)])
    #expect(actor == main)
  }

  @Test func aCalmRefreshKeepsTheValueAndItsFailureGoesToTheActivity() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      await face.write(.loaded(1))
      let options = Self.calm(delay: .milliseconds(300), minimum: .milliseconds(500), restore: true, clock: clock)
      let task = await face.refresh(ParityWork(clock: clock, sleep: .seconds(1), result: nil), options: options)
      try await clock.waitForSleepers(1)
      await parityEventually("the call reached its clock (\(side))") { clock.sleeperCount >= 1 }
      clock.advance(by: .seconds(1))
      try await task.value(timeLimit: .seconds(300))
      #expect(await face.state() == .loaded(1), "(\(side))")
      #expect(await face.lastErrorIsFailure(), "the failure is kept in the activity (\(side))")
    }
    #expect(main == [.loaded(1)])
    #expect(actor == main)
  }

  @Test func cancellingARefreshOfALoadedValueWithRestoreWritesNothing() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      await face.write(.loaded(1))
      let gate = ActorGate()
      let task = await face.refresh(ParityWork(gate: gate, result: 2), options: Self.calm(restore: true, clock: clock))
      _ = try await parityWithin { await gate.untilWaiting(1) }
      await face.cancel()
      gate.open()
      try await task.value(timeLimit: .seconds(300))
      #expect(await face.state() == .loaded(1), "(\(side))")
    }
    #expect(main == [.loaded(1)])
    #expect(actor == main)
  }

  @Test func cachedRefreshShowsTheEntryAndKeepsItOnAFailedRefetch() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      let key = CacheKey<Int>("parity")
      let gate = ActorGate()
      let first = await face.refreshCached(key, ParityWork(gate: gate, result: 1), options: nil)
      _ = try await parityWithin { await gate.untilWaiting(1) }
      gate.open()
      try await first.value(timeLimit: .seconds(300))
      #expect(await face.state() == .loaded(1), "(\(side))")
      let second = await face.refreshCached(key, ParityWork(result: 2), options: nil)
      try await second.value(timeLimit: .seconds(300))
      #expect(await face.state() == .loaded(2), "(\(side))")
      let third = await face.refreshCached(key, ParityWork(result: nil), options: nil)
      try await third.value(timeLimit: .seconds(300))
    }
    #expect(main.prefix(2) == [.loading, .loaded(1)])
    #expect(actor == main)
  }

  @Test func cancelAndResetDuringACachedRefresh() async throws {
    let (main, actor) = try await parityRun { face, clock, side in
      let key = CacheKey<Int>("parity")
      let gate = ActorGate()
      let first = await face.refreshCached(key, ParityWork(gate: gate, result: 1), options: nil)
      _ = try await parityWithin { await gate.untilWaiting(1) }
      await parityEventually("spinner (\(side))") { await face.state() == .loading }
      await face.cancel()
      try await first.value(timeLimit: .seconds(300))
      let gate2 = ActorGate()
      let second = await face.refreshCached(key, ParityWork(gate: gate2, result: 2), options: nil)
      _ = try await parityWithin { await gate2.untilWaiting(1) }
      await face.reset()
      gate.open()
      gate2.open()
      try await second.value(timeLimit: .seconds(300))
      #expect(await face.state() == .absent, "(\(side))")
    }
    #expect(main.last == .absent)
    #expect(actor == main)
  }

  // MARK: loadMore

  @Test func loadMoreAppendsAndAFailureKeepsTheListAndAsksTheSameCursorAgain() async throws {
    let runs = LockedBox<[ParitySide: [LoadableState<Pages<Int, Int>>]]>([:])
    _ = try await parityRun { face, clock, side in
      await face.writeList(.loaded(Pages(items: [1], nextCursor: 2)))
      let failing = ParityPageWork(fails: true)
      try await parityWithin { await face.loadMoreAwaiting(failing) }
      #expect(await face.listState() == .loaded(Pages(items: [1], nextCursor: 2)), "(\(side))")
      #expect(await face.lastErrorIsFailure(), "(\(side))")
      let gate = ActorGate()
      let work = ParityPageWork(gate: gate)
      let task = await face.loadMore(work)
      let joining = await face.loadMore(work)  // joins: the page is fetched once
      _ = try await parityWithin { await gate.untilWaiting(1) }
      #expect(await face.listState() == .loaded(Pages(items: [1], nextCursor: 2)), "no .loading for a page (\(side))")
      gate.open()
      try await task.value(timeLimit: .seconds(300))
      try await joining.value(timeLimit: .seconds(300))
      #expect(failing.cursors.withLock { $0 } == [2])
      #expect(work.cursors.withLock { $0 } == [2], "(\(side))")
      let history = await face.listHistory()
      runs.withLock { $0[side] = history }
    }
    let main = runs.withLock { $0[.main] } ?? []
    #expect(main == [.loaded(Pages(items: [1], nextCursor: 2)), .loaded(Pages(items: [1, 20], nextCursor: 3))])
    #expect(runs.withLock { $0[.actor] } == main)
  }

  @Test func cancelAndResetSupersedeARunningLoadMore() async throws {
    let runs = LockedBox<[ParitySide: [LoadableState<Pages<Int, Int>>]]>([:])
    _ = try await parityRun { face, clock, side in
      let start = LoadableState.loaded(Pages(items: [1], nextCursor: 2))
      await face.writeList(start)
      let gate = ActorGate()
      let cancelled = await face.loadMore(ParityPageWork(gate: gate))
      _ = try await parityWithin { await gate.untilWaiting(1) }
      await face.cancel()
      gate.open()
      try await cancelled.value(timeLimit: .seconds(300))
      #expect(await face.listState() == start, "a cancelled page is never appended (\(side))")
      let gate2 = ActorGate()
      let resetOne = await face.loadMore(ParityPageWork(gate: gate2))
      _ = try await parityWithin { await gate2.untilWaiting(1) }
      await face.reset()
      gate2.open()
      try await resetOne.value(timeLimit: .seconds(300))
      #expect(await face.listState() == .absent, "(\(side))")
      let history = await face.listHistory()
      runs.withLock { $0[side] = history }
    }
    let main = runs.withLock { $0[.main] } ?? []
    #expect(main == [.loaded(Pages(items: [1], nextCursor: 2)), .absent])
    #expect(runs.withLock { $0[.actor] } == main)
  }

  // MARK: after the owner is released

  @Test(arguments: ["calm load", "calm async load", "refresh", "cached refresh", "loadMore", "async loadMore"])
  func everyOperationEndsAfterTheOwnerIsReleased(_ operation: String) async throws {
    for side in [ParitySide.main, .actor] {
      let clock = TestClock()
      let cache = LoadCache(staleTime: .seconds(3_600), clock: clock)
      var face: (any ParityFace)? =
        side == .main ? await MainActor.run { MainParityOwner(cache: cache) } : ActorParityOwner(cache: cache)
      weak let released = face
      await face?.observe()
      await face?.writeList(.loaded(Pages(items: [1], nextCursor: 2)))
      await face?.write(.loaded(1))
      let gate = ActorGate()
      let options = Self.calm(delay: .milliseconds(300), minimum: .milliseconds(500), restore: true, clock: clock)
      let work = ParityWork(gate: gate, clock: clock, sleep: .milliseconds(400), result: 2)
      let task: Task<Void, Never>
      switch operation {
      case "calm load": task = await face!.load(work, options: options)
      case "calm async load":
        let owner = face!
        task = Task { await owner.loadAwaiting(work, options: options) }
      case "refresh": task = await face!.refresh(work, options: options)
      case "cached refresh": task = await face!.refreshCached(CacheKey("released"), work, options: options)
      case "loadMore": task = await face!.loadMore(ParityPageWork(gate: gate))
      default:
        let owner = face!
        task = Task { await owner.loadMoreAwaiting(ParityPageWork(gate: gate)) }
      }
      _ = try await parityWithin { await gate.untilWaiting(1) }
      face = nil
      gate.open()
      // Move time along until the task ends (each advance is bounded; the wait is bounded).
      let ended = LockedBox(false)
      let watcher = Task {
        await task.value
        ended.withLock { $0 = true }
      }
      await parityEventually("\(operation) ended after the owner was released (\(side))") {
        if ended.withLock({ $0 }) { return true }
        clock.advance(by: .milliseconds(100))
        return false
      }
      try await watcher.value(timeLimit: .seconds(300))
      await parityEventually("\(operation): the owner went away (\(side))") { released == nil }
    }
  }
}

import Dispatch
import Processed
import ProcessedTesting
import Testing

@testable import Processed

// Black-box tests of "Every face on any actor" (SPEC.md), written from its sentences: value(for:) callers, actor-owned
// and main-actor states bound to one cache, and the cache's methods called from actors and detached tasks.

/// Counts calls from any thread.
final class OFCounter: Sendable {
  private let box = LockedBox(0)
  /// Counts one more and returns the new count.
  func next() -> Int {
    box.withLock { count -> Int in
      count += 1
      return count
    }
  }
  var value: Int { box.withLock { $0 } }
}

/// A flag set from any thread.
final class OFFlag: Sendable {
  private let box = LockedBox<Bool?>(nil)
  func set(_ value: Bool) { box.withLock { $0 = value } }
  var value: Bool? { box.withLock { $0 } }
}

struct OFFailure: Error, Equatable {}

/// Waits until a state is bound to `key`'s entry (an actor-owned state's cached load reaches the entry after it returns).
func ofUntilBound<V: Sendable>(_ cache: LoadCache, _ key: CacheKey<V>) async {
  await ofUntil("a state is bound to the entry") {
    await MainActor.run { cache.store.entry(for: key)?.isBound == true }
  }
}

/// Waits until `key`'s entry has no bound state (a state's cancel on another actor reaches the entry after it returns).
func ofUntilUnbound<V: Sendable>(_ cache: LoadCache, _ key: CacheKey<V>) async {
  await ofUntil("the entry has no bound state") {
    await MainActor.run { cache.store.entry(for: key)?.isBound != true }
  }
}

/// Polls `condition`, yielding between checks; records an issue if it never held. The limit is only a hang detector
/// (300 s of real time, which a busy machine running the whole suite under a sanitizer stays far below).
func ofUntil(
  _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () async -> Bool
) async {
  let hangLimit = ContinuousClock.now + .seconds(300)
  while ContinuousClock.now < hangLimit {
    if await condition() { return }
    await Task.yield()
  }
  Issue.record("never held: \(what)", sourceLocation: sourceLocation)
}

extension Task {
  /// The task's value; a hang is recorded at the caller's line (then rethrown). The 300 s limit is a hang detector only:
  /// these tasks hop to the main actor, whose queue is long when the whole suite runs under a sanitizer.
  func ofValue(clock: TestClock? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Success {
    do {
      return try await value(timeLimit: .seconds(300), clock: clock)
    } catch let error as TaskTimeLimitExceeded {
      Issue.record("\(error)", sourceLocation: sourceLocation)
      throw error
    }
  }
}

/// How many `value(for:fetch:)` callers wait on `key`'s entry now.
@MainActor
func ofWaiters(_ cache: LoadCache, _ key: CacheKey<Int>) -> Int {
  cache.store.entry(for: key)?.callers?.waitingCount ?? 0
}

/// Waits until `count` callers wait on `key`'s entry.
func ofUntilWaiters(
  _ cache: LoadCache, _ key: CacheKey<Int>, _ count: Int, sourceLocation: SourceLocation = #_sourceLocation
) async {
  await ofUntil("\(count) callers wait on \(key)", sourceLocation: sourceLocation) {
    await MainActor.run { ofWaiters(cache, key) } >= count
  }
}

/// An actor on its own executor with an actor-owned state (and a paged list) that records what its observers saw and
/// whether its blocks and observers ran off its executor.
actor OFOwner {
  let executor: QueueExecutor
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

  @IsolatedLoadable var x: LoadableState<Int> = .absent
  @IsolatedLoadable var list: LoadableState<Pages<Int, Int>> = .absent

  let record: OwnerRecord
  let lists = OFListRecord()
  var tokens: [ObservationToken] = []

  init(_ label: String = "of-owner") {
    executor = QueueExecutor(label)
    record = OwnerRecord(executor)
  }

  var history: [LoadableState<Int>] { record.history }
  var offExecutor: Int { record.offExecutor }
  var state: LoadableState<Int> { x }
  var listState: LoadableState<Pages<Int, Int>> { list }
  var listHistory: [[Int]] { lists.items }

  func observe() {
    let record = record
    tokens.append(
      $x.observe { state in
        record.check()
        record.history.append(state)
      })
    let lists = lists
    tokens.append(
      $list.observe { state in
        record.check()
        lists.items.append(state.data?.items ?? [])
      })
  }

  @discardableResult
  func start(
    _ key: CacheKey<Int>, in cache: LoadCache, options: LoadOptions? = nil,
    fetch: @escaping @Sendable () async throws -> Int
  ) -> Task<Void, Never> {
    let record = record
    return $x.load(key, in: cache, options: options) {
      record.check()
      let value = try await fetch()
      record.check()
      return value
    }
  }

  func refresh(
    _ key: CacheKey<Int>, in cache: LoadCache, fetch: @escaping @Sendable () async throws -> Int
  ) async {
    let record = record
    await $x.refresh(key, in: cache) {
      record.check()
      return try await fetch()
    }
  }

  func cancel() { $x.cancel() }
  func write(_ state: LoadableState<Int>) { x = state }

  /// `value(for:fetch:)` called from this actor.
  func value(
    _ key: CacheKey<Int>, in cache: LoadCache, fetch: @escaping @Sendable () async throws -> Int
  ) async throws -> Int {
    try await cache.value(for: key, fetch: fetch)
  }

  func until(_ condition: @escaping @Sendable (LoadableState<Int>) -> Bool) async {
    for await state in $x.states where condition(state) { return }
  }

  // MARK: Pages

  func loadList(_ key: CacheKey<Pages<Int, Int>>, in cache: LoadCache, fetches: OFCounter) async {
    await $list.load(key, in: cache) {
      _ = fetches.next()
      return Pages(items: [1], nextCursor: 2)
    }
  }

  func loadMore(fetches: OFCounter) async {
    await $list.loadMore { (cursor: Int) in
      _ = fetches.next()
      return Pages(items: [cursor * 10], nextCursor: cursor + 1)
    }
  }

  func untilList(_ items: [Int]) async {
    for await state in $list.states where state.data?.items == items { return }
  }
}

final class OFListRecord {
  var items: [[Int]] = []
}

/// An actor that only calls the cache (a service without states).
actor OFService {
  let cache: LoadCache
  init(_ cache: LoadCache) { self.cache = cache }

  func setThenRead(_ value: Int, for key: CacheKey<Int>) async throws -> Int {
    cache.set(value, for: key)
    return try await cache.value(for: key) { -1 }
  }

  func removeAllThenCount() async -> Int {
    cache.removeAll()
    return await cache.count
  }

  func invalidate(_ key: CacheKey<Int>) { cache.invalidate(key) }

  func value(_ key: CacheKey<Int>, fetch: @escaping @Sendable () async throws -> Int) async throws -> Int {
    try await cache.value(for: key, fetch: fetch)
  }

  func failingMutation(_ key: CacheKey<Int>, after gate: ActorGate) async throws {
    try await cache.mutate(key, optimistic: { $0 += 1 }) {
      await gate.wait()
      throw OFFailure()
    }
  }

  func read(_ key: CacheKey<Int>) async -> Int? { await cache.value(for: key) }
}

@Suite struct CacheCallersAndStatesTests {
  static let limit = Duration.seconds(30)

  // MARK: value(for:) options

  @Test func valueForRetriesAFailedAttemptWithTheCallersRetryPolicy() async throws {
    let clock = TestClock()
    let cache = LoadCache(clock: clock)
    let key = CacheKey<Int>("of", "retry")
    let attempts = OFCounter()
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 2), clock: clock)
    let caller = Task.detached {
      try await cache.value(for: key, options: options) {
        let attempt = attempts.next()
        if attempt == 1 { throw OFFailure() }
        return attempt * 10
      }
    }
    try await clock.waitForSleepers(1)  // the retry delay
    #expect(attempts.value == 1)
    clock.advance(by: .seconds(1))
    #expect(try await caller.ofValue(clock: clock) == 20)
    #expect(attempts.value == 2)
    #expect(await cache.value(for: key) == 20)
  }

  @Test func valueForTimesOutOnTheCallersClockAndKeepsNoValue() async throws {
    let clock = TestClock()
    let cache = LoadCache(clock: clock)
    let key = CacheKey<Int>("of", "timeout")
    let gate = ActorGate()
    let caller = Task.detached {
      try await cache.value(for: key, options: LoadOptions(timeout: .seconds(5), clock: clock)) {
        await gate.wait()  // ignores cancellation, like a server that never answers
        return 1
      }
    }
    await gate.untilWaiting(1)
    try await clock.waitForSleepers(1)  // the timeout
    clock.advance(by: .seconds(5))
    await #expect(throws: TimeoutError.self) { try await caller.ofValue(clock: clock) }
    gate.open()
    #expect(await cache.value(for: key) == nil)
    #expect(try await cache.value(for: key) { 7 } == 7)  // the error was not kept: a new fetch
  }

  @Test func aJoinersTimeoutDoesNotApplyToTheFetchItJoined() async throws {
    let clock = TestClock()
    let cache = LoadCache(clock: clock)
    let key = CacheKey<Int>("of", "joiner-options")
    let gate = ActorGate()
    let runs = OFCounter()
    let first = Task.detached {
      try await cache.value(for: key) {
        _ = runs.next()
        await gate.wait()
        return 1
      }
    }
    await gate.untilWaiting(1)
    let second = Task.detached {
      try await cache.value(for: key, options: LoadOptions(timeout: .seconds(1), clock: clock)) { -1 }
    }
    await ofUntilWaiters(cache, key, 2)
    #expect(clock.sleeperCount == 0)  // nothing of the joiner's timeout runs
    clock.advance(by: .seconds(10))
    gate.open()
    #expect(try await first.ofValue() == 1)
    #expect(try await second.ofValue() == 1)
    #expect(runs.value == 1)
  }

  @Test func aLimiterSharedByCallersOnTwoActorsRunsOneFetchAtATime() async throws {
    let cache = LoadCache()
    let limiter = LoadLimiter(maxConcurrent: 1)
    let options = LoadOptions(limiter: limiter)
    let gate = ActorGate()
    let started = OFCounter()
    let (a, b) = (CacheKey<Int>("of", "limit", 1), CacheKey<Int>("of", "limit", 2))
    let first = Task.detached {
      try await cache.value(for: a, options: options) {
        _ = started.next()
        await gate.wait()
        return 1
      }
    }
    await gate.untilWaiting(1)
    let second = Task.detached {
      try await cache.value(for: b, options: options) {
        _ = started.next()
        return 2
      }
    }
    await ofUntil("the second fetch waits for a permit") { limiter.waiting == 1 }
    #expect(started.value == 1)
    gate.open()
    #expect(try await first.ofValue() == 1)
    #expect(try await second.ofValue() == 2)
    #expect(started.value == 2)
  }

  // MARK: Remove, set and invalidate from an actor while a caller waits

  @Test func removeAllFromAnActorDuringAFetchGivesTheCallerItsOwnUnstoredAnswer() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("of", "removeAll")
    let gate = ActorGate()
    let runs = OFCounter()
    let caller = Task.detached {
      try await cache.value(for: key) {
        _ = runs.next()
        await gate.wait()
        return 5
      }
    }
    await gate.untilWaiting(1)
    let service = OFService(cache)
    #expect(await service.removeAllThenCount() == 0)
    gate.open()
    #expect(try await caller.ofValue() == 5)
    #expect(await cache.value(for: key) == nil)
    #expect(await cache.count == 0)
    #expect(runs.value == 1)
  }

  @Test func aSetFromAnActorDuringAFetchWinsForTheCallerTheActorAndABoundState() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("of", "set")
    let gate = ActorGate()
    let owner = OFOwner()
    await owner.observe()
    let task = await owner.start(key, in: cache) {
      await gate.wait()
      return 1
    }
    await gate.untilWaiting(1)
    let caller = Task.detached { try await cache.value(for: key) { -1 } }
    await ofUntilWaiters(cache, key, 1)
    let service = OFService(cache)
    #expect(try await service.setThenRead(42, for: key) == 42)  // the actor reads its own write
    #expect(try await caller.ofValue() == 42)
    gate.open()
    try await task.ofValue()
    try await Task { await owner.until { $0 == .loaded(42) } }.ofValue()
    #expect(await cache.value(for: key) == 42)  // the older answer never writes
    #expect(await owner.history == [.loading, .loaded(42)])
    #expect(await owner.offExecutor == 0)
  }

  @Test func anInvalidateFromAnActorRestartsTheFetchForTheCallerAndTheBoundState() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("of", "invalidate")
    let gate = ActorGate()
    let runs = OFCounter()
    let owner = OFOwner()
    await owner.observe()
    // The state's block: the first run waits at the gate, each answers its run number.
    _ = await owner.start(key, in: cache) {
      let run = runs.next()
      if run == 1 { await gate.wait() }
      return run
    }
    await gate.untilWaiting(1)
    let caller = Task.detached { try await cache.value(for: key) { -1 } }
    await ofUntilWaiters(cache, key, 1)
    await OFService(cache).invalidate(key)
    #expect(try await caller.ofValue() == 2)
    try await Task { await owner.until { $0 == .loaded(2) } }.ofValue()
    gate.open()
    #expect(await cache.value(for: key) == 2)
    #expect(runs.value == 2)
    #expect(await owner.history == [.loading, .loaded(2)])
    #expect(await owner.offExecutor == 0)
  }

  @Test func anActorsRefreshOvertakesTheFetchACallerWaitsFor() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("of", "refresh")
    let gate = ActorGate()
    let firstSawCancellation = OFFlag()
    let caller = Task.detached {
      try await cache.value(for: key) {
        await gate.wait()
        firstSawCancellation.set(Task.isCancelled)
        return 1
      }
    }
    await gate.untilWaiting(1)
    let owner = OFOwner()
    await owner.observe()
    try await Task { await owner.refresh(key, in: cache) { 2 } }.ofValue()
    #expect(await owner.state == .loaded(2))
    // The caller's fetch was overtaken: it returns what overtook it.
    #expect(try await caller.ofValue() == 2)
    gate.open()
    await ofUntil("the first fetch ended") { firstSawCancellation.value != nil }
    #expect(firstSawCancellation.value == true)  // "a fetch in flight is cancelled and started again"
    #expect(await cache.value(for: key) == 2)
    #expect(await !owner.history.contains(.loaded(1)))
  }

  // MARK: An actor-owned state and callers on one fetch

  @Test func anActorStatesFetchIsJoinedByACaller() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("of", "state-first")
    let gate = ActorGate()
    let runs = OFCounter()
    let owner = OFOwner()
    await owner.observe()
    let task = await owner.start(key, in: cache) {
      _ = runs.next()
      await gate.wait()
      return 3
    }
    await gate.untilWaiting(1)
    let callerRuns = OFCounter()
    let caller = Task.detached {
      try await cache.value(for: key) {
        _ = callerRuns.next()
        return -1
      }
    }
    await ofUntilWaiters(cache, key, 1)
    gate.open()
    #expect(try await caller.ofValue() == 3)
    try await task.ofValue()
    #expect(runs.value == 1)
    #expect(callerRuns.value == 0)
    #expect(await owner.history == [.loading, .loaded(3)])
    #expect(await owner.offExecutor == 0)
  }

  @Test func aCallersFetchIsJoinedByAnActorState() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("of", "caller-first")
    let gate = ActorGate()
    let caller = Task.detached {
      try await cache.value(for: key) {
        await gate.wait()
        return 4
      }
    }
    await gate.untilWaiting(1)
    let owner = OFOwner()
    await owner.observe()
    let stateRuns = OFCounter()
    let task = await owner.start(key, in: cache) {
      _ = stateRuns.next()
      return -1
    }
    #expect(await owner.state == .loading)
    // The owner's load reaches the entry on the main actor after the call returns: it joins the fetch there.
    await ofUntilBound(cache, key)
    gate.open()
    #expect(try await caller.ofValue() == 4)
    try await task.ofValue()
    #expect(stateRuns.value == 0)
    #expect(await owner.history == [.loading, .loaded(4)])
  }

  @Test func cancellingTheCallerKeepsTheFetchTheBoundActorStateWaitsFor() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("of", "caller-cancelled")
    let gate = ActorGate()
    let sawCancellation = OFFlag()
    let owner = OFOwner()
    await owner.observe()
    let task = await owner.start(key, in: cache) {
      await gate.wait()
      sawCancellation.set(Task.isCancelled)
      return 6
    }
    await gate.untilWaiting(1)
    let caller = Task.detached { try await cache.value(for: key) { -1 } }
    await ofUntilWaiters(cache, key, 1)
    caller.cancel()
    // Ends at once, while the fetch is still parked at the gate.
    await #expect(throws: CancellationError.self) { try await caller.ofValue() }
    gate.open()
    try await task.ofValue()
    #expect(sawCancellation.value == false)
    #expect(await owner.history == [.loading, .loaded(6)])
    #expect(await cache.value(for: key) == 6)
  }

  @Test func cancellingTheActorStateKeepsTheFetchACallerWaitsFor() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("of", "state-cancelled")
    let gate = ActorGate()
    let sawCancellation = OFFlag()
    let owner = OFOwner()
    await owner.observe()
    let task = await owner.start(key, in: cache) {
      await gate.wait()
      sawCancellation.set(Task.isCancelled)
      return 8
    }
    await gate.untilWaiting(1)
    let caller = Task.detached { try await cache.value(for: key) { -1 } }
    await ofUntilWaiters(cache, key, 1)
    await owner.cancel()
    await ofUntilUnbound(cache, key)  // the owner's cancel has reached the entry
    gate.open()
    #expect(try await caller.ofValue() == 8)
    try await task.ofValue()
    #expect(sawCancellation.value == false)
    #expect(await cache.value(for: key) == 8)
    #expect(await owner.history == [.loading])  // cancelled: never written again (keepState)
  }

  @Test func whenTheCallerAndTheActorStateBothLeaveTheFetchIsCancelled() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("of", "all-gone")
    let gate = ActorGate()
    let sawCancellation = OFFlag()
    let owner = OFOwner()
    let task = await owner.start(key, in: cache) {
      await gate.wait()
      sawCancellation.set(Task.isCancelled)
      return 9
    }
    await gate.untilWaiting(1)
    let caller = Task.detached { try await cache.value(for: key) { -1 } }
    await ofUntilWaiters(cache, key, 1)
    caller.cancel()
    await #expect(throws: CancellationError.self) { try await caller.ofValue() }
    await owner.cancel()
    await ofUntilUnbound(cache, key)  // the owner's cancel has reached the entry
    // The owner's cancel reaches the entry on the main actor after the call returns: the fetch is cancelled then.
    await ofUntil("the entry's fetch was cancelled") {
      await MainActor.run { cache.store.entry(for: key)?.isFetching != true }
    }
    gate.open()
    try await task.ofValue()
    await ofUntil("the fetch ended") { sawCancellation.value != nil }
    #expect(sawCancellation.value == true)
    #expect(await cache.value(for: key) == nil)
  }

  @Test func cancellingAJoinedActorStateLeavesTheCallersFetchAlone() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("of", "joined-state-cancelled")
    let gate = ActorGate()
    let sawCancellation = OFFlag()
    let caller = Task.detached {
      try await cache.value(for: key) {
        await gate.wait()
        sawCancellation.set(Task.isCancelled)
        return 14
      }
    }
    await gate.untilWaiting(1)
    let owner = OFOwner()
    _ = await owner.start(key, in: cache) { -1 }  // joins the caller's fetch
    await ofUntilBound(cache, key)
    await owner.cancel()
    await ofUntilUnbound(cache, key)  // the owner's cancel has reached the entry
    gate.open()
    #expect(try await caller.ofValue() == 14)
    #expect(sawCancellation.value == false)
    #expect(await cache.value(for: key) == 14)
  }

  /// The same as ``cancellingTheActorStateKeepsTheFetchACallerWaitsFor()`` with a main-actor state, for comparison.
  @Test func cancellingAMainActorStateKeepsTheFetchACallerWaitsFor() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("of", "main-state-cancelled")
    let gate = ActorGate()
    let sawCancellation = OFFlag()
    let screen = await MainActor.run { Loadable<Int>() }
    await MainActor.run {
      _ = screen.projectedValue.load(key, in: cache) {
        await gate.wait()
        sawCancellation.set(Task.isCancelled)
        return 15
      }
    }
    await gate.untilWaiting(1)
    let caller = Task.detached { try await cache.value(for: key) { -1 } }
    await ofUntilWaiters(cache, key, 1)
    await MainActor.run { screen.projectedValue.cancel() }
    gate.open()
    #expect(try await caller.ofValue() == 15)
    #expect(sawCancellation.value == false)
    #expect(await cache.value(for: key) == 15)
  }

  @Test func anActorReleasedWhileItsCachedLoadRunsLeavesTheFetchToTheWaitingCaller() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("of", "released")
    let gate = ActorGate()
    let sawCancellation = OFFlag()
    var owner: OFOwner? = OFOwner()
    _ = await owner!.start(key, in: cache) {
      await gate.wait()
      sawCancellation.set(Task.isCancelled)
      return 11
    }
    await gate.untilWaiting(1)
    let caller = Task.detached { try await cache.value(for: key) { -1 } }
    await ofUntilWaiters(cache, key, 1)
    owner = nil
    gate.open()
    #expect(try await caller.ofValue() == 11)
    #expect(sawCancellation.value == false)
    #expect(await cache.value(for: key) == 11)
  }

  @Test func aFetchErrorReachesEveryJoinedCallerAndTheStateAndIsNotKept() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("of", "error")
    let gate = ActorGate()
    let owner = OFOwner()
    await owner.observe()
    let task = await owner.start(key, in: cache) {
      await gate.wait()
      throw OFFailure()
    }
    await gate.untilWaiting(1)
    let service = OFService(cache)
    let fromActor = Task { try await service.value(key) { -1 } }
    let detached = Task.detached { try await cache.value(for: key) { -2 } }
    await ofUntilWaiters(cache, key, 2)
    gate.open()
    await #expect(throws: OFFailure.self) { try await fromActor.ofValue() }
    await #expect(throws: OFFailure.self) { try await detached.ofValue() }
    try await task.ofValue()
    #expect(await owner.state.error is OFFailure)
    #expect(await cache.value(for: key) == nil)
    // Not kept: the next call fetches again, and the state still bound to the entry shows the new value.
    #expect(try await service.value(key) { 7 } == 7)
    try await Task { await owner.until { $0 == .loaded(7) } }.ofValue()
    #expect(await owner.offExecutor == 0)
  }

  // MARK: Stale reads and invalidation off the main actor

  @Test func twoStaleCallsWhileTheRefreshRunsStartOneRefreshFetch() async throws {
    let clock = TestClock()
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    let key = CacheKey<Int>("of", "stale")
    let runs = OFCounter()
    let gate = ActorGate()
    let fetch: @Sendable () async throws -> Int = {
      let run = runs.next()
      if run == 2 { await gate.wait() }
      return run
    }
    #expect(try await Task.detached { try await cache.value(for: key, fetch: fetch) }.ofValue() == 1)
    clock.advance(by: .seconds(10))
    #expect(try await Task.detached { try await cache.value(for: key, fetch: fetch) }.ofValue() == 1)
    await gate.untilWaiting(1)  // the background refresh runs
    let service = OFService(cache)
    #expect(try await service.value(key, fetch: fetch) == 1)  // stale again: joins the refresh
    #expect(try await Task.detached { try await cache.value(for: key, fetch: fetch) }.ofValue() == 1)
    gate.open()
    await ofUntil("the refresh wrote") { await cache.value(for: key) == 2 }
    #expect(runs.value == 2)
  }

  @Test func invalidatePrefixFromADetachedTaskMakesOneStaleReadRefetchOnce() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let posts1 = CacheKey<Int>("of-posts", 1)
    let posts2 = CacheKey<Int>("of-posts", 2)
    let users1 = CacheKey<Int>("of-users", 1)
    let fetches = (posts1: OFCounter(), posts2: OFCounter(), users1: OFCounter())
    let (first, users) = try await Task.detached {
      cache.set(1, for: posts1)
      cache.set(2, for: posts2)
      cache.set(3, for: users1)
      cache.invalidate(prefix: "of-posts")
      let first = try await cache.value(for: posts1) { 100 + fetches.posts1.next() }
      let users = try await cache.value(for: users1) { 300 + fetches.users1.next() }
      return (first, users)
    }.ofValue()
    #expect(first == 1)  // stale: returned at once, refreshed in the background
    #expect(users == 3)  // fresh: nothing runs
    await ofUntil("the refetch wrote") { await cache.value(for: posts1) == 101 }
    #expect(fetches.posts1.value == 1)
    #expect(fetches.posts2.value == 0)
    #expect(fetches.users1.value == 0)
    #expect(await cache.value(for: posts2) == 2)
    // The refetched value is fresh: another read runs nothing.
    #expect(try await Task.detached { try await cache.value(for: posts1) { -1 } }.ofValue() == 101)
    #expect(fetches.posts1.value == 1)
  }

  @Test func countFromADetachedTaskSeesItsOwnWritesAndAFetchInFlight() async throws {
    let cache = LoadCache()
    let gate = ActorGate()
    let c = CacheKey<Int>("of", "count", "c")
    let counts = try await Task.detached {
      var counts: [Int] = []
      cache.set(1, for: CacheKey<Int>("of", "count", "a"))
      cache.set(2, for: CacheKey<Int>("of", "count", "b"))
      counts.append(await cache.count)
      let caller = Task.detached {
        try await cache.value(for: c) {
          await gate.wait()
          return 3
        }
      }
      await gate.untilWaiting(1)
      counts.append(await cache.count)  // the entry with a fetch in flight counts
      cache.remove(CacheKey<Int>("of", "count", "a"))
      counts.append(await cache.count)
      gate.open()
      _ = try await caller.value
      counts.append(await cache.count)
      return counts
    }.ofValue()
    #expect(counts == [2, 3, 2, 2])
  }

  // MARK: Mutation from an actor, seen by a state on another actor

  @Test func aFailedMutationFromAnActorIsShownAndUndoneOnABoundStatesOwner() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("of", "mutate")
    let runs = OFCounter()
    let owner = OFOwner()
    await owner.observe()
    try await owner.start(key, in: cache) { runs.next() * 100 }.ofValue()
    let service = OFService(cache)
    let gate = ActorGate()
    let mutation = Task { try await service.failingMutation(key, after: gate) }
    await gate.untilWaiting(1)
    try await Task { await owner.until { $0 == .loaded(101) } }.ofValue()
    #expect(await service.read(key) == 101)
    #expect(try await service.value(key) { -1 } == 101)  // the shown value, no fetch
    gate.open()
    await #expect(throws: OFFailure.self) { try await mutation.ofValue() }
    // Undone, then the end-of-mutation invalidation refetches with the state's block.
    try await Task { await owner.until { $0 == .loaded(200) } }.ofValue()
    #expect(await owner.history == [.loading, .loaded(100), .loaded(101), .loaded(100), .loaded(200)])
    #expect(runs.value == 2)
    #expect(await owner.offExecutor == 0)
  }

  // MARK: Calm options on a cached load, with a caller

  @Test func aCallerEndsOnceTheEntryHoldsTheOutcomeWhileTheStateKeepsItsMinimumSpinner() async throws {
    let clock = TestClock()
    let cache = LoadCache(clock: clock)
    let key = CacheKey<Int>("of", "minimum")
    let gate = ActorGate()
    let owner = OFOwner()
    await owner.observe()
    let options = LoadOptions(minimumLoadingTime: .seconds(2), clock: clock)
    let task = await owner.start(key, in: cache, options: options) {
      await gate.wait()
      return 12
    }
    await gate.untilWaiting(1)
    #expect(await owner.state == .loading)
    let caller = Task.detached { try await cache.value(for: key) { -1 } }
    await ofUntilWaiters(cache, key, 1)
    gate.open()
    #expect(try await caller.ofValue(clock: clock) == 12)  // no clock advance needed
    try await clock.waitForSleepers(1)  // the minimum loading time
    #expect(await owner.state == .loading)
    clock.advance(by: .seconds(2))
    try await task.ofValue(clock: clock)
    #expect(await owner.history == [.loading, .loaded(12)])
  }

  @Test func aCancelledCachedLoadThatRestoresLeavesTheFetchToTheCaller() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("of", "restore")
    let gate = ActorGate()
    let owner = OFOwner()
    await owner.observe()
    await owner.write(.loaded(5))
    let task = await owner.start(key, in: cache, options: LoadOptions(cancellation: .restorePreviousState)) {
      await gate.wait()
      return 13
    }
    await gate.untilWaiting(1)
    let caller = Task.detached { try await cache.value(for: key) { -1 } }
    await ofUntilWaiters(cache, key, 1)
    await owner.cancel()
    await ofUntilUnbound(cache, key)  // the owner's cancel has reached the entry
    #expect(await owner.state == .loaded(5))
    gate.open()
    #expect(try await caller.ofValue() == 13)
    try await task.ofValue()
    #expect(await cache.value(for: key) == 13)
    #expect(await owner.history == [.loaded(5), .loading, .loaded(5)])
  }

  // MARK: Several owners on one entry

  @Test func loadMoreOnOneActorsBoundListReachesAnotherActorsListAndCallers() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Pages<Int, Int>>("of", "list")
    let fetches = OFCounter()
    let (a, b) = (OFOwner("of-a"), OFOwner("of-b"))
    await a.observe()
    await b.observe()
    await a.loadList(key, in: cache, fetches: fetches)
    await b.loadList(key, in: cache, fetches: fetches)  // a fresh hit
    #expect(fetches.value == 1)
    await a.loadMore(fetches: fetches)
    #expect(await a.listState.data?.items == [1, 20])
    try await Task { await b.untilList([1, 20]) }.ofValue()
    let read = try await Task.detached {
      try await cache.value(for: key) { Pages(items: [-1], nextCursor: nil) }
    }.ofValue()
    #expect(read.items == [1, 20])
    #expect(read.nextCursor == 3)
    #expect(fetches.value == 2)
    #expect(await b.listHistory == [[1], [1, 20]])
    #expect(await a.offExecutor == 0)
    #expect(await b.offExecutor == 0)
  }

  @Test func actorStatesAndCallersOnSixteenKeysRunSixteenFetches() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let counts = LockedBox([Int: Int]())
    @Sendable func fetch(_ index: Int) -> Int {
      counts.withLock { $0[index, default: 0] += 1 }
      return index
    }
    let owners = (0..<16).map { OFOwner("of-stress-\($0)") }
    try await Task {
      try await Self.stress(cache, owners, fetch)
    }.value(timeLimit: .seconds(300))  // a hang detector: 3,200 calls hop to the main actor, slow under a sanitizer
    for index in 0..<16 { #expect(counts.withLock { $0[index] } == 1, "key \(index)") }
  }

  static func stress(
    _ cache: LoadCache, _ owners: [OFOwner], _ fetch: @escaping @Sendable (Int) -> Int
  ) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
      for (index, owner) in owners.enumerated() {
        group.addTask {
          let key = CacheKey<Int>("of", "stress", index)
          await owner.start(key, in: cache) { fetch(index) }.value
          #expect(await owner.state == .loaded(index))
        }
      }
      for task in 0..<16 {
        group.addTask {
          for call in 0..<200 {
            let index = (task + call) % 16
            let value = try await cache.value(for: CacheKey<Int>("of", "stress", index)) { fetch(index) }
            #expect(value == index)
          }
        }
      }
      try await group.waitForAll()
    }
  }
}

import Dispatch
import Processed
import ProcessedTesting
import Testing

@testable import Processed

/// An actor on a `QueueExecutor` whose actor-owned states use a `LoadCache`, recording what its observers saw and
/// whether any user code ran off its executor.
actor CachedFeedOwner {
  let executor: QueueExecutor
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

  @IsolatedLoadable var feed: LoadableState<Int> = .absent
  @IsolatedLoadable var list: LoadableState<Pages<Int, Int>> = .absent

  let cache: LoadCache
  let record: OwnerRecord
  /// What the list's and the activity's observers saw (a class of its own: an observer that captured the actor would
  /// keep it alive through its own state).
  let seen = ListRecord()
  var listHistory: [LoadableState<Pages<Int, Int>>] { seen.list }
  /// How many fetch blocks ran.
  var fetches: Int { seen.fetches }
  var tokens: [ObservationToken] = []

  init(_ cache: LoadCache, label: String = "cached-owner") {
    self.cache = cache
    executor = QueueExecutor(label)
    record = OwnerRecord(executor)
  }

  var history: [LoadableState<Int>] { record.history }
  var offExecutor: Int { record.offExecutor }
  var state: LoadableState<Int> { feed }

  func observeAll() {
    let record = record
    tokens.append(
      $feed.observe { state in
        record.check()
        record.history.append(state)
      })
    let seen = seen
    tokens.append(
      $list.observe { state in
        record.check()
        seen.list.append(state)
      })
    tokens.append($feed.observeActivity { activity in seen.phases.append(activity.phase) })
  }

  /// Starts a cached load of `key` whose fetch (if it runs) waits for `gate`, then returns `value`.
  @discardableResult
  func startCached(
    _ key: CacheKey<Int>, _ value: Int, after gate: ActorGate? = nil, options: LoadOptions? = nil
  ) -> Task<Void, Never> {
    let (record, seen) = (record, seen)
    return $feed.load(key, in: cache, options: options) {
      record.check()
      seen.fetches += 1
      await gate?.wait()
      record.check()
      return value
    }
  }

  func loadCached(_ key: CacheKey<Int>, _ value: Int, after gate: ActorGate? = nil) async {
    let (record, seen) = (record, seen)
    await $feed.load(key, in: cache) {
      record.check()
      seen.fetches += 1
      await gate?.wait()
      return value
    }
  }

  /// ``loadCached(_:_:after:)``, returning the state as the call left it.
  func loadCachedReturningState(_ key: CacheKey<Int>, _ value: Int) async -> LoadableState<Int> {
    await loadCached(key, value)
    return feed
  }

  func refreshCached(_ key: CacheKey<Int>, _ value: Int, after gate: ActorGate? = nil) async {
    let (record, seen) = (record, seen)
    await $feed.refresh(key, in: cache) {
      record.check()
      seen.fetches += 1
      await gate?.wait()
      return value
    }
  }

  func loadPlain(_ value: Int) async { await $feed.load { value } }
  func cancel() { $feed.cancel() }
  func reset() { $feed.reset() }
  func write(_ state: LoadableState<Int>) { feed = state }
  var activity: LoadActivity { $feed.activity }

  /// Returns once the state satisfies `condition` (checked now and at each change).
  func until(_ condition: @escaping (LoadableState<Int>) -> Bool) async {
    for await state in $feed.states where condition(state) { return }
  }

  // MARK: Pages

  func setList(_ state: LoadableState<Pages<Int, Int>>) { list = state }

  func loadMore(after gate: ActorGate? = nil) async {
    let (record, seen) = (record, seen)
    await $list.loadMore { (cursor: Int) in
      record.check()
      seen.fetches += 1
      await gate?.wait()
      return Pages(items: [cursor * 10], nextCursor: cursor < 3 ? cursor + 1 : nil)
    }
  }

  func startLoadMore(after gate: ActorGate? = nil) -> Task<Void, Never> {
    let seen = seen
    return $list.loadMore { (cursor: Int) in
      seen.fetches += 1
      await gate?.wait()
      return Pages(items: [cursor * 10], nextCursor: cursor < 3 ? cursor + 1 : nil)
    }
  }

  func loadList(_ key: CacheKey<Pages<Int, Int>>) async {
    let seen = seen
    await $list.load(key, in: cache) {
      seen.fetches += 1
      return Pages(items: [1], nextCursor: 2)
    }
  }

  var listState: LoadableState<Pages<Int, Int>> { list }

  // MARK: Calm presentation

  func loadCalmly(_ value: Int, options: LoadOptions, after gate: ActorGate? = nil) -> Task<Void, Never> {
    let record = record
    return $feed.load(options: options) {
      record.check()
      await gate?.wait()
      return value
    }
  }
}

/// What a `CachedFeedOwner`'s list and activity observers saw; used on the actor only.
final class ListRecord {
  var fetches = 0
  var list: [LoadableState<Pages<Int, Int>>] = []
  var phases: [LoadActivity.Phase] = []
}

/// The cache, `loadMore` and calm presentation on actor-owned states (`IsolatedLoadableController`): the rules of the
/// main actor, with every write and observer call on the owning actor.
@Suite struct IsolatedCacheTests {
  @Test func aMissFetchesOnTheOwnerAndWritesThere() async throws {
    let cache = LoadCache()
    let owner = CachedFeedOwner(cache)
    await owner.observeAll()
    await owner.loadCached(CacheKey("a"), 1)
    #expect(await owner.history == [.loading, .loaded(1)])
    #expect(await owner.offExecutor == 0)
    #expect(await owner.fetches == 1)
    #expect(await cache.value(for: CacheKey<Int>("a")) == 1)
    #expect(await owner.activity.phase == .idle)
  }

  @Test func theStartStateIsWrittenBeforeTheCallReturns() async throws {
    let cache = LoadCache()
    let owner = CachedFeedOwner(cache)
    let gate = ActorGate()
    let (seen, task) = await owner.run { owner in
      let task = owner.startCached(CacheKey("a"), 1, after: gate)
      return (owner.feed, task)
    }
    #expect(seen == .loading)
    gate.open()
    try await task.value(timeLimit: .seconds(30))
    #expect(await owner.state == .loaded(1))
  }

  @Test func onceAnActorReadTheCacheAHitOfAnyKeyShowsItsValueWithoutLoading() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    // Made on the main actor before any actor read the cache, and after.
    await MainActor.run { cache.set(1, for: CacheKey<Int>("before")) }
    let owner = CachedFeedOwner(cache)
    await owner.observeAll()
    try await owner.startCached(CacheKey("first"), 0).value(timeLimit: .seconds(300))
    await MainActor.run { cache.set(2, for: CacheKey<Int>("after")) }
    try await owner.startCached(CacheKey("before"), 9).value(timeLimit: .seconds(300))
    try await owner.startCached(CacheKey("after"), 9).value(timeLimit: .seconds(300))
    // Fresh hits: each call wrote the entry's value before it returned — no `.loading` — and fetched nothing.
    let history = await owner.history
    #expect(history == [.loading, .loaded(0), .loaded(1), .loaded(2)])
    #expect(await owner.fetches == 1)
    #expect(await owner.offExecutor == 0)
  }

  /// The actor sets a key (queued for the main actor, as the owner is not on it) and then loads it: the state shows the
  /// set value and never, on the way, the value the key had before the set (the published value a load reads first).
  @Test func aCachedLoadAfterTheActorsOwnSetNeverShowsTheOlderValue() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let owner = CachedFeedOwner(cache)
    await owner.observeAll()
    cache.set(0, for: CacheKey<Int>("c"))
    cache.set(100, for: CacheKey<Int>("b"))
    await owner.loadCached(CacheKey("b"), -1)  // the actor read the cache: its entries are published
    for value in 101..<140 {
      let shown = await owner.run { owner in
        _ = await owner.loadCachedReturningState(CacheKey("c"), -1)
        owner.cache.set(value, for: CacheKey<Int>("b"))
        return await owner.loadCachedReturningState(CacheKey("b"), -1)
      }
      #expect(shown == .loaded(value))
    }
    let shownOfB = await owner.history.compactMap { state -> Int? in
      guard case .loaded(let value) = state, value >= 100 else { return nil }
      return value
    }
    #expect(shownOfB == Array(100..<140))
    #expect(await owner.fetches == 0)
    #expect(await owner.offExecutor == 0)
  }

  @Test func aStateMovedBetweenKeysShowsEachKeysValue() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    // Two entries written as often: equal write counts must not pass for the same value.
    await MainActor.run {
      cache.set(1, for: CacheKey<Int>("a"))
      cache.set(2, for: CacheKey<Int>("b"))
    }
    let owner = CachedFeedOwner(cache)
    await owner.observeAll()
    for key in ["a", "b", "a", "b"] {
      try await owner.startCached(CacheKey(key), 9).value(timeLimit: .seconds(300))
    }
    let history = await owner.history
    #expect(history.suffix(4) == [.loaded(1), .loaded(2), .loaded(1), .loaded(2)])
    #expect(await owner.state == .loaded(2))
    #expect(await owner.fetches == 0)
  }

  @Test func anActorAndAMainActorStateShareOneFetchEachWrittenOnItsOwner() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("shared")
    let screen = await MainActor.run { CacheScreen() }
    let recorder = await MainActor.run { StateRecorder(screen.$number) }
    let gate = ActorGate()
    let owner = CachedFeedOwner(cache)
    await owner.observeAll()
    // The actor's load starts the entry's fetch: its block runs on the owner and holds the fetch at the gate.
    let ownerTask = await owner.startCached(key, 99, after: gate)
    await gate.untilWaiting(1)
    // The screen's load, on the main actor, joins that fetch: its block never runs.
    let screenBlockRuns = LockedBox(0)
    let mainTask = await MainActor.run {
      screen.$number.load(key, in: cache) {
        screenBlockRuns.withLock { $0 += 1 }
        return 7
      }
    }
    gate.open()
    try await mainTask.value(timeLimit: .seconds(30))
    try await ownerTask.value(timeLimit: .seconds(30))
    #expect(await owner.history == [.loading, .loaded(99)])
    #expect(await owner.fetches == 1)
    #expect(await owner.offExecutor == 0)
    #expect(screenBlockRuns.withLock { $0 } == 0)
    #expect(await MainActor.run { recorder.values } == [.loading, .loaded(99)])
  }

  @Test func laterWritesOfTheEntryReachTheBoundStateInOrder() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("k")
    let owners = [CachedFeedOwner(cache, label: "o1"), CachedFeedOwner(cache, label: "o2")]
    for owner in owners {
      await owner.observeAll()
      await owner.loadCached(key, 0)
    }
    await MainActor.run {
      for value in 1...50 { cache.set(value, for: key) }
    }
    for owner in owners {
      try await Task { await owner.until { $0 == .loaded(50) } }.value(timeLimit: .seconds(30))
      let history = await owner.history
      #expect(history.compactMap(\.data) == Array(0...50))
      #expect(await owner.offExecutor == 0)
    }
  }

  @Test func aSetDuringTheFetchIsNeverOverwrittenByTheOlderAnswer() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("k")
    let owner = CachedFeedOwner(cache)
    await owner.observeAll()
    let gate = ActorGate()
    let task = await owner.startCached(key, 1, after: gate)
    await gate.untilWaiting(1)
    await MainActor.run { cache.set(2, for: key) }
    gate.open()
    try await task.value(timeLimit: .seconds(30))
    try await Task { await owner.until { $0 == .loaded(2) } }.value(timeLimit: .seconds(30))
    #expect(await owner.history == [.loading, .loaded(2)])
    #expect(await MainActor.run { cache.value(for: key) } == 2)
  }

  @Test func aSecondLoadOfAnEntryTheActorReadIsAHitWithoutLoading() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("k")
    let first = CachedFeedOwner(cache, label: "first")
    await first.loadCached(key, 1)
    let second = CachedFeedOwner(cache, label: "second")
    await second.observeAll()
    let seen = await second.run { owner in
      owner.startCached(key, 2)
      return owner.feed
    }
    #expect(seen == .loaded(1))
    await second.loadCached(key, 2)
    #expect(await second.history == [.loaded(1)])
    #expect(await second.fetches == 0)
  }

  @Test func refreshKeepsTheValueAndFetchesAgain() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("k")
    let owner = CachedFeedOwner(cache)
    await owner.observeAll()
    await owner.loadCached(key, 1)
    await owner.refreshCached(key, 2)
    #expect(await owner.history == [.loading, .loaded(1), .loaded(2)])
    #expect(await owner.fetches == 2)
  }

  @Test func cancelStopsWritingAndAnOwnLoadUnbinds() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("k")
    let owner = CachedFeedOwner(cache)
    await owner.observeAll()
    let gate = ActorGate()
    let task = await owner.startCached(key, 1, after: gate)
    await gate.untilWaiting(1)
    await owner.cancel()
    #expect(await owner.activity.phase == .idle)
    gate.open()
    try await task.value(timeLimit: .seconds(30))
    // Bound again, then unbound by an own load: a later `set` never reaches the state.
    await owner.loadCached(key, 3)
    await owner.loadPlain(4)
    await MainActor.run { cache.set(5, for: key) }
    await owner.loadPlain(6)
    #expect(await owner.history.allSatisfy { $0 != .loaded(1) && $0 != .loaded(5) })
    #expect(await owner.state == .loaded(6))
  }

  @Test func aManualWriteAndResetUnbind() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("k")
    let owner = CachedFeedOwner(cache)
    await owner.observeAll()
    await owner.loadCached(key, 1)
    await owner.write(.loaded(10))
    await MainActor.run { cache.set(2, for: key) }
    await owner.loadCached(key, 0)  // bound again: shows 2 (stale or fresh, the entry's value)
    await owner.reset()
    await MainActor.run { cache.set(3, for: key) }
    await owner.loadPlain(4)
    let history = await owner.history
    #expect(!history.contains(.loaded(3)))
    #expect(history.last == .loaded(4))
    #expect(history.prefix(4) == [.loading, .loaded(1), .loaded(10), .loaded(2)])
  }

  @Test func cancellingTheAsyncCallerCancelsTheFetchNobodyElseWaitsFor() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("k")
    let owner = CachedFeedOwner(cache)
    let gate = ActorGate()
    let caller = Task { await owner.loadCached(key, 1, after: gate) }
    await gate.untilWaiting(1)
    caller.cancel()
    try await caller.value(timeLimit: .seconds(30))
    gate.open()
    #expect(await MainActor.run { cache.value(for: key) } == nil)
  }

  @Test func loadMoreAppendsOnTheOwner() async throws {
    let cache = LoadCache()
    let owner = CachedFeedOwner(cache)
    await owner.observeAll()
    await owner.setList(.loaded(Pages(items: [0], nextCursor: 1)))
    await owner.loadMore()
    await owner.loadMore()
    #expect(await owner.listState.data?.items == [0, 10, 20])
    #expect(await owner.listState.data?.nextCursor == 3)
    let history = await owner.listHistory
    #expect(history.map { $0.data?.items ?? [] } == [[0], [0, 10], [0, 10, 20]])
    #expect(await owner.offExecutor == 0)
  }

  @Test func loadMoreDoesNothingWithoutMorePagesAndJoinsARunningOne() async throws {
    let cache = LoadCache()
    let owner = CachedFeedOwner(cache)
    await owner.setList(.loaded(Pages(items: [0], nextCursor: nil)))
    await owner.loadMore()
    #expect(await owner.fetches == 0)
    await owner.setList(.loaded(Pages(items: [0], nextCursor: 1)))
    let gate = ActorGate()
    let first = await owner.startLoadMore(after: gate)
    let second = await owner.startLoadMore(after: gate)
    await gate.untilWaiting(1)
    gate.open()
    try await first.value(timeLimit: .seconds(30))
    try await second.value(timeLimit: .seconds(30))
    #expect(await owner.fetches == 1)
    #expect(await owner.listState.data?.items == [0, 10])
  }

  @Test func loadMoreOfABoundListFetchesThroughTheEntry() async throws {
    let cache = LoadCache()
    let key = CacheKey<Pages<Int, Int>>("list")
    let owner = CachedFeedOwner(cache)
    await owner.loadList(key)
    await owner.loadMore()
    #expect(await owner.listState.data?.items == [1, 20])
    #expect(await MainActor.run { cache.value(for: key)?.items } == [1, 20])
  }

  @Test func aLoadingDelayHidesAQuickLoadsSpinner() async throws {
    let clock = TestClock()
    let owner = CachedFeedOwner(LoadCache())
    await owner.observeAll()
    let task = await owner.loadCalmly(1, options: LoadOptions(loadingDelay: .seconds(1), clock: clock))
    try await task.value(timeLimit: .seconds(30))
    #expect(await owner.history == [.loaded(1)])
    #expect(await owner.offExecutor == 0)
  }

  @Test func aSlowLoadShowsItsSpinnerAfterTheDelay() async throws {
    let clock = TestClock()
    let owner = CachedFeedOwner(LoadCache())
    await owner.observeAll()
    let gate = ActorGate()
    let task = await owner.loadCalmly(1, options: LoadOptions(loadingDelay: .seconds(1), clock: clock), after: gate)
    #expect(await owner.state == .absent)
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    try await Task { await owner.until { $0 == .loading } }.value(timeLimit: .seconds(30))
    gate.open()
    try await task.value(timeLimit: .seconds(30))
    #expect(await owner.history == [.loading, .loaded(1)])
  }

  @Test func aDebouncedCachedLoadWritesNothingUntilItsDelayIsOver() async throws {
    let clock = TestClock()
    let cache = LoadCache(clock: clock)
    let owner = CachedFeedOwner(cache)
    await owner.observeAll()
    let options = LoadOptions(debounce: .trailing(.seconds(1)), clock: clock)
    let task = await owner.startCached(CacheKey("a"), 2, options: options)
    #expect(await owner.state == .absent)
    try await clock.waitForSleepers(1)
    #expect(await owner.history.isEmpty)
    clock.advance(by: .seconds(1))
    try await task.value(timeLimit: .seconds(30))
    #expect(await owner.history == [.loading, .loaded(2)])
    #expect(await owner.fetches == 1)
  }

  @Test func aCancelledLoadThatRestoresWritesBackWhatItReplaced() async throws {
    let owner = CachedFeedOwner(LoadCache())
    await owner.observeAll()
    await owner.write(.loaded(5))
    let gate = ActorGate()
    let task = await owner.loadCalmly(1, options: LoadOptions(cancellation: .restorePreviousState), after: gate)
    await gate.untilWaiting(1)
    await owner.cancel()
    gate.open()
    try await task.value(timeLimit: .seconds(30))
    #expect(await owner.history == [.loaded(5), .loading, .loaded(5)])
  }
}

/// An actor whose cached load's block captures only a counter, not the actor.
actor PlainCachedOwner {
  @IsolatedLoadable var value: LoadableState<Int> = .absent
  let cache: LoadCache
  let fetches: LockedBox<Int>

  init(_ cache: LoadCache, fetches: LockedBox<Int>) {
    self.cache = cache
    self.fetches = fetches
  }

  func load(_ key: CacheKey<Int>) async {
    await $value.load(key, in: cache) { [fetches] in
      fetches.withLock { $0 += 1 }
      return 1
    }
  }
}

@Suite struct IsolatedCacheLifetimeTests {
  @Test func anActorBoundToAnEntryGoesAwayAndNoFetchRunsForItAfterwards() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("k")
    let fetches = LockedBox(0)
    var owner: PlainCachedOwner? = PlainCachedOwner(cache, fetches: fetches)
    weak let released = owner
    await owner?.load(key)
    #expect(fetches.withLock { $0 } == 1)
    owner = nil
    // The cache keeps neither the actor nor its state alive.
    #expect(released == nil)
    await MainActor.run { cache.invalidate(key) }
    await MainActor.run { cache.invalidate(key) }
    #expect(fetches.withLock { $0 } == 1)
  }
}

/// An actor-owned state bound to a key whose fetches read a shared counter.
actor CounterOwner {
  @IsolatedLoadable var value: LoadableState<Int> = .absent
  /// The loaded values the observer saw (a box, so that the observer does not keep the actor alive).
  let seen = LockedBox<[Int]>([])
  var values: [Int] { seen.withLock { $0 } }
  var token: ObservationToken?

  func bind(_ key: CacheKey<Int>, in cache: LoadCache, counter: LockedBox<Int>) async {
    let seen = seen
    token = $value.observe { state in
      if case .loaded(let value) = state { seen.withLock { $0.append(value) } }
    }
    await $value.load(key, in: cache) { counter.withLock { $0 } }
  }

  func until(_ value: Int) async {
    for await state in $value.states where state == .loaded(value) { return }
  }
}

@Suite struct IsolatedCacheOrderTests {
  /// A reference model: the entry's outcomes, in order, as the main-actor state sees them. Every actor-owned state
  /// bound to the key sees the same values in the same order, each on its own actor, whatever sets, invalidations and
  /// refetches the main actor makes in between.
  @Test(arguments: [1, 2, 3] as [UInt64])
  func statesOnSeveralOwnersSeeTheEntrysOutcomesInOneOrder(seed: UInt64) async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("counter")
    let counter = LockedBox(0)
    let (screen, recorder) = await MainActor.run {
      let screen = Loadable<Int>()
      return (screen, StateRecorder(screen.projectedValue))
    }
    await MainActor.run { _ = screen.projectedValue.load(key, in: cache) { counter.withLock { $0 } } }
    let owners = [CounterOwner(), CounterOwner()]
    for owner in owners { await owner.bind(key, in: cache, counter: counter) }
    var random = MBRandom(seed: seed)
    for step in 1...60 {
      let value = step * 10
      if random.percent(60) {
        await MainActor.run { cache.set(value, for: key) }
      } else {
        // The refetch answers the counter: the invalidation's fetch writes `value`.
        counter.withLock { $0 = value }
        await MainActor.run { cache.invalidate(key) }
        await MainActor.run {}  // lets the refetch start before the next step may supersede it
      }
      if random.percent(20) { await Task.yield() }
    }
    // The last outcome: a set that no fetch in flight can overwrite.
    await MainActor.run { cache.set(1_000, for: key) }
    try await Task { @MainActor in
      await until(.changes(of: screen.projectedValue)) { screen.wrappedValue == .loaded(1_000) }
    }
    .value(timeLimit: .seconds(30))
    let mainValues = await MainActor.run { recorder.values.compactMap(\.data) }
    for owner in owners {
      try await Task { await owner.until(1_000) }.value(timeLimit: .seconds(30))
      let seen = await owner.values
      // Bound after the main state's first value; from there on, the same sequence.
      #expect(Array(mainValues.suffix(seen.count)) == seen)
      #expect(seen.last == 1_000)
    }
  }
}

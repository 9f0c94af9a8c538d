import Processed
import ProcessedTesting
import Testing

/// An actor whose state's loads run through its mirror (a cached load, a calmly presented load) or on its own engine,
/// for `.joinRunning` calls made while one of them runs.
actor JoiningOwner {
  @IsolatedLoadable var feed: LoadableState<Int> = .absent
  @IsolatedLoadable var list: LoadableState<Pages<Int, Int>> = .absent
  let cache: LoadCache
  /// What the observer saw and which blocks ran (a class of its own: an observer or block that captured the actor
  /// would keep it alive through its own state).
  let record = JoinRecord()
  var token: ObservationToken?

  init(_ cache: LoadCache) { self.cache = cache }

  var history: [LoadableState<Int>] { record.history }
  var ran: [String] { record.ran }

  func observe() {
    let record = record
    token = $feed.observe { state in record.history.append(state) }
  }

  /// A cached load of `key` whose fetch waits for `gate`, then returns `value`.
  func startCached(_ key: CacheKey<Int>, _ value: Int, after gate: ActorGate, options: LoadOptions? = nil)
    -> Task<Void, Never>
  {
    let record = record
    return $feed.load(key, in: cache, options: options) {
      record.ran.append("cached \(value)")
      await gate.wait()
      return value
    }
  }

  /// A plain load whose block waits for `gate`, then returns `value`.
  func startPlain(_ value: Int, after gate: ActorGate? = nil, options: LoadOptions? = nil) -> Task<Void, Never> {
    let record = record
    return $feed.load(options: options) {
      record.ran.append("plain \(value)")
      await gate?.wait()
      return value
    }
  }

  /// The `async` form of ``startPlain(_:after:options:)``, with `.joinRunning`; returns what the state shows then.
  func loadJoining(_ value: Int) async -> LoadableState<Int> {
    let record = record
    await $feed.load(options: LoadOptions(overlap: .joinRunning)) {
      record.ran.append("plain \(value)")
      return value
    }
    return feed
  }

  var state: LoadableState<Int> { feed }
  var activity: LoadActivity { $feed.activity }

  func setList(_ state: LoadableState<Pages<Int, Int>>) { list = state }
  var listState: LoadableState<Pages<Int, Int>> { list }

  func startLoadMore(after gate: ActorGate) -> Task<Void, Never> {
    let record = record
    return $list.loadMore { (cursor: Int) in
      record.ran.append("more \(cursor)")
      await gate.wait()
      return Pages(items: [cursor], nextCursor: nil)
    }
  }

  func startListJoining(_ items: [Int]) -> Task<Void, Never> {
    let record = record
    return $list.load(options: LoadOptions(overlap: .joinRunning)) {
      record.ran.append("list")
      return Pages(items: items, nextCursor: nil)
    }
  }
}

/// What a ``JoiningOwner``'s observer saw and which of its blocks ran, in order; touched on the owner only.
final class JoinRecord {
  var history: [LoadableState<Int>] = []
  var ran: [String] = []
}

/// `.joinRunning` on an actor-owned state joins the load the state follows through its mirror — a cached load's
/// fetch, a calmly presented load — as it joins the state's own load, and as it does on the main actor.
@Suite struct IsolatedJoinRunningTests {
  static let joining = LoadOptions(overlap: .joinRunning)

  @Test func aJoiningLoadJoinsTheCachedFetchTheStateFollows() async throws {
    let owner = JoiningOwner(LoadCache())
    await owner.observe()
    let gate = ActorGate()
    let cached = await owner.startCached(CacheKey<Int>("feed"), 1, after: gate)
    await gate.untilWaiting(1)
    let joined = await owner.startPlain(2, options: Self.joining)
    gate.open()
    try await joined.value(timeLimit: .seconds(300))
    // The joining call ended with the fetch it joined, after its value was written; its block never ran.
    #expect(await owner.state == .loaded(1))
    try await cached.value(timeLimit: .seconds(300))
    #expect(await owner.ran == ["cached 1"])
    #expect(await owner.history == [.loading, .loaded(1)])
  }

  @Test func anAsyncJoiningLoadReturnsWhenTheCachedFetchEnds() async throws {
    let owner = JoiningOwner(LoadCache())
    let gate = ActorGate()
    _ = await owner.startCached(CacheKey<Int>("feed"), 1, after: gate)
    await gate.untilWaiting(1)
    let joined = Task { await owner.loadJoining(2) }
    gate.open()
    #expect(try await joined.value(timeLimit: .seconds(300)) == .loaded(1))
    #expect(await owner.ran == ["cached 1"])
  }

  @Test func aJoiningCachedLoadJoinsTheStatesOwnLoad() async throws {
    let owner = JoiningOwner(LoadCache())
    let gate = ActorGate()
    let own = await owner.startPlain(1, after: gate)
    await gate.untilWaiting(1)
    let joined = await owner.startCached(CacheKey<Int>("feed"), 2, after: ActorGate(), options: Self.joining)
    gate.open()
    try await joined.value(timeLimit: .seconds(300))
    try await own.value(timeLimit: .seconds(300))
    // The cached call fetched nothing and bound nothing: the state shows its own load's value.
    #expect(await owner.ran == ["plain 1"])
    #expect(await owner.state == .loaded(1))
    #expect(await owner.cache.count == 0)
  }

  @Test func aJoiningCallEndsWhenTheFollowedFetchIsSuperseded() async throws {
    let owner = JoiningOwner(LoadCache())
    let gate = ActorGate()
    _ = await owner.startCached(CacheKey<Int>("feed"), 1, after: gate)
    await gate.untilWaiting(1)
    let joined = await owner.startPlain(2, options: Self.joining)
    // A newer load supersedes the fetch the call joined: the joining call ends, though the fetch is still held.
    let newer = await owner.startPlain(3)
    try await joined.value(timeLimit: .seconds(300))
    try await newer.value(timeLimit: .seconds(300))
    #expect(await owner.state == .loaded(3))
    #expect(!(await owner.ran.contains("plain 2")))
    gate.open()
  }

  @Test func aJoiningLoadJoinsACalmlyPresentedLoad() async throws {
    let owner = JoiningOwner(LoadCache())
    let gate = ActorGate()
    let calm = await owner.startPlain(1, after: gate, options: LoadOptions(cancellation: .restorePreviousState))
    await gate.untilWaiting(1)
    let joined = await owner.startPlain(2, options: Self.joining)
    gate.open()
    try await joined.value(timeLimit: .seconds(300))
    try await calm.value(timeLimit: .seconds(300))
    #expect(await owner.ran == ["plain 1"])
    #expect(await owner.state == .loaded(1))
  }

  @Test func aCachedLoadThatFetchedNothingLeavesNoRunningLoadToJoin() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    await MainActor.run { cache.set(5, for: CacheKey<Int>("feed")) }
    let owner = JoiningOwner(cache)
    // The cache's first read off the main actor: the owner cannot see the fresh value and guesses a fetch; the shadow
    // finds the value and starts nothing.
    try await owner.startCached(CacheKey<Int>("feed"), 1, after: ActorGate()).value(timeLimit: .seconds(300))
    #expect(await owner.state == .loaded(5))
    #expect(await owner.activity.phase == .idle)
    // Nothing runs, so a joining call runs its own load.
    try await owner.startPlain(2, options: Self.joining).value(timeLimit: .seconds(300))
    #expect(await owner.ran == ["plain 2"])
    #expect(await owner.state == .loaded(2))
  }

  @Test func aSecondLoadMoreJoinsTheFirstWhateverTheShadowSees() async throws {
    let owner = JoiningOwner(LoadCache())
    let gate = ActorGate()
    await owner.setList(.loaded(Pages(items: [0], nextCursor: 1)))
    let first = await owner.startLoadMore(after: gate)
    let second = await owner.startLoadMore(after: gate)
    // The first page's fetch ends before the second call is known to have reached the main actor: it joined anyway.
    await gate.untilWaiting(1)
    gate.open()
    try await first.value(timeLimit: .seconds(300))
    try await second.value(timeLimit: .seconds(300))
    #expect(await owner.ran == ["more 1"])
    #expect(await owner.listState == .loaded(Pages(items: [0, 1], nextCursor: nil)))
  }

  @Test func aJoiningLoadSupersedesALoadMoreAsOnTheMainActor() async throws {
    let owner = JoiningOwner(LoadCache())
    let gate = ActorGate()
    await owner.setList(.loaded(Pages(items: [0], nextCursor: 1)))
    let more = await owner.startLoadMore(after: gate)
    await gate.untilWaiting(1)
    let load = await owner.startListJoining([7])
    try await load.value(timeLimit: .seconds(300))
    gate.open()
    try await more.value(timeLimit: .seconds(300))
    // The load ran and won; the superseded page was never appended.
    #expect(await owner.ran == ["more 1", "list"])
    #expect(await owner.listState == .loaded(Pages(items: [7], nextCursor: nil)))
  }
}

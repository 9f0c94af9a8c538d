import ProcessedTesting
import Testing

@testable import Processed

/// Revalidation when focus or the network returns, and polling (spec, "Revalidation: focus, network, interval").
@MainActor
@Suite struct RevalidationTests {
  let clock = TestClock()

  typealias Screen = CacheScreen

  /// Counts each key's fetches.
  @MainActor
  final class Server {
    var fetches: [String: Int] = [:]
    func value(_ name: String) -> Int {
      fetches[name, default: 0] += 1
      return fetches[name]!
    }
  }

  func key(_ name: String) -> CacheKey<Int> { CacheKey(name) }

  /// Waits until the screens' states show `expected` (the refetches' answers).
  func settle(_ cache: LoadCache) async {
    for _ in 0..<100 where cache.store.boundEntries.values.contains(where: { $0.isBusy }) { await Task.yield() }
  }

  @Test func focusReturningRefetchesExactlyTheBoundStaleEntries() async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let server = Server()
    let (stale, fresh) = (Screen(), Screen())
    await stale.$number.load(key("stale"), in: cache) { server.value("stale") }
    clock.advance(by: .seconds(60))
    await fresh.$number.load(key("fresh"), in: cache) { server.value("fresh") }
    cache.set(1, for: key("unbound"))  // written, nobody shows it
    cache.setFocused(false)
    #expect(!cache.isFocused)
    let history = StateRecorder(stale.$number)
    cache.setFocused(true)
    try await history.wait(forCount: 1)
    #expect(history.values == [.loaded(2)])  // no .loading: a background refetch
    #expect(server.fetches == ["stale": 2, "fresh": 1])
    #expect(fresh.number == .loaded(1))
  }

  @Test func theNetworkReturningRefetchesAlsoWhileUnfocused() async throws {
    let cache = LoadCache(clock: clock)  // staleTime zero: stale at once
    let server = Server()
    let screen = Screen()
    await screen.$number.load(key("a"), in: cache) { server.value("a") }
    cache.setFocused(false)
    cache.setOnline(false)
    #expect(!cache.isOnline)
    let history = StateRecorder(screen.$number)
    cache.setOnline(true)
    try await history.wait(forCount: 1)
    #expect(server.fetches["a"] == 2)
    #expect(history.values == [.loaded(2)])
  }

  @Test func tenTogglesRefetchOncePerThrottleWindow() async throws {
    let cache = LoadCache(revalidationThrottle: .seconds(5), clock: clock)
    let server = Server()
    let screen = Screen()
    await screen.$number.load(key("a"), in: cache) { server.value("a") }
    let history = StateRecorder(screen.$number)
    for _ in 0..<10 {
      cache.setFocused(false)
      cache.setFocused(true)
      cache.setOnline(false)
      cache.setOnline(true)  // focus and network share one window
      await settle(cache)
    }
    #expect(server.fetches["a"] == 2)
    clock.advance(by: .seconds(4))
    cache.setFocused(false)
    cache.setFocused(true)  // a skipped return does not move the window
    await settle(cache)
    #expect(server.fetches["a"] == 2)
    clock.advance(by: .seconds(1))  // exactly the throttle after the last refetch
    cache.setFocused(false)
    cache.setFocused(true)
    try await history.wait(forCount: 2)
    #expect(server.fetches["a"] == 3)
  }

  @Test func otherFetchesNeitherCountNorOpenTheThrottle() async throws {
    let cache = LoadCache(revalidationThrottle: .seconds(5), clock: clock)
    let server = Server()
    let screen = Screen()
    await screen.$number.load(key("a"), in: cache) { server.value("a") }
    cache.setFocused(false)
    cache.setFocused(true)  // revalidation 1 at +0
    await settle(cache)
    clock.advance(by: .seconds(3))
    cache.invalidate(key("a"))  // another fetch: does not open the window
    await settle(cache)
    #expect(server.fetches["a"] == 3)
    cache.setFocused(false)
    cache.setFocused(true)
    await settle(cache)
    #expect(server.fetches["a"] == 3)
  }

  @Test func aReturnWhileTheFetchIsInFlightJoinsIt() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let gate = Gate()
    var runs = 0
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache) {
      runs += 1
      await gate.wait()
      return runs
    }
    await gate.untilWaiting(1)
    cache.setFocused(false)
    cache.setFocused(true)  // joins: counts as the revalidation
    gate.open()
    try await task.value(timeLimit: .seconds(30))
    await settle(cache)
    #expect(runs == 1)
    cache.setFocused(false)
    cache.setFocused(true)  // within the throttle of the joined fetch
    await settle(cache)
    #expect(runs == 1)
  }

  @Test func aSetDuringAFocusRefetchWins() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let gate = Gate()
    var runs = 0
    await screen.$number.load(key("a"), in: cache) {
      runs += 1
      if runs > 1 { await gate.wait() }
      return runs
    }
    cache.setFocused(false)
    cache.setFocused(true)
    await gate.untilWaiting(1)
    cache.set(42, for: key("a"))
    gate.open()
    await settle(cache)
    for _ in 0..<10 { await Task.yield() }
    #expect(screen.number == .loaded(42))
    #expect(cache.value(for: key("a")) == 42)
  }

  /// Every face binds a state that revalidation reaches.
  @Test func everyFaceIsRevalidated() async throws {
    let cache = LoadCache(clock: clock)
    let server = Server()
    let screen = Screen()
    let other = Screen()
    await screen.$number.load(key("wrapper"), in: cache) { server.value("wrapper") }
    await screen.load(\.plain, key: key("keyPath"), in: cache) { server.value("keyPath") }
    await other.loadables.number.load(key("loadables"), in: cache) { server.value("loadables") }
    cache.setOnline(false)
    cache.setOnline(true)
    let histories = [StateRecorder(screen.$number), StateRecorder(screen, \.plain), StateRecorder(other.$number)]
    for history in histories { try await history.wait(forCount: 1) }
    #expect(server.fetches == ["wrapper": 2, "keyPath": 2, "loadables": 2])
    #expect(screen.number == .loaded(2) && screen.plain == .loaded(2) && other.number == .loaded(2))
  }

  // MARK: Polling

  @Test func anIntervalPollsFromTheEndOfTheLastFetchWhileAStateIsBound() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = Server()
    let screen = Screen()
    let options = LoadOptions(refetchInterval: .seconds(10), clock: clock)
    await screen.$number.load(key("a"), in: cache, options: options) { server.value("a") }
    let history = StateRecorder(screen.$number)
    for tick in 1...3 {
      try await clock.waitForCacheTimers(1)
      #expect(clock.sleeperCount == 0)  // the poll timer is the cache's own
      clock.advance(by: .seconds(10))
      try await history.wait(forCount: tick)
    }
    #expect(history.values == [.loaded(2), .loaded(3), .loaded(4)])  // fresh or not: polling ignores staleness
    screen.$number.cancel()  // unbound: polling stops
    #expect(cache.store.entry(for: key("a"))?.revalidation?.pollTimer == nil)
    clock.advance(by: .seconds(100))
    await settle(cache)
    #expect(server.fetches["a"] == 4)
  }

  @Test func pollingStopsWhenFocusGoesAndResumesWithOnePollWhenItReturns() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = Server()
    let screen = Screen()
    let options = LoadOptions(refetchInterval: .seconds(10), clock: clock)
    await screen.$number.load(key("a"), in: cache, options: options) { server.value("a") }
    try await clock.waitForCacheTimers(1)
    cache.setFocused(false)
    clock.advance(by: .seconds(35))  // three ticks missed
    await settle(cache)
    #expect(server.fetches["a"] == 1)
    let history = StateRecorder(screen.$number)
    cache.setFocused(true)  // overdue: one poll at once, never several
    try await history.wait(forCount: 1)
    await settle(cache)
    #expect(server.fetches["a"] == 2)
    try await clock.waitForCacheTimers(1)  // the next tick, 10 s after that poll
    clock.advance(by: .seconds(9))
    await settle(cache)
    #expect(server.fetches["a"] == 2)
    clock.advance(by: .seconds(1))
    try await history.wait(forCount: 2)
    #expect(server.fetches["a"] == 3)
  }

  @Test func pollingInTheBackgroundGoesOnWhileUnfocused() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = Server()
    let screen = Screen()
    let options = LoadOptions(refetchInterval: .seconds(10), refetchInBackground: true, clock: clock)
    await screen.$number.load(key("a"), in: cache, options: options) { server.value("a") }
    cache.setFocused(false)
    let history = StateRecorder(screen.$number)
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(10))
    try await history.wait(forCount: 1)
    #expect(server.fetches["a"] == 2)
  }

  @Test func theShortestIntervalOfTheBoundStatesWins() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = Server()
    let (slow, quick) = (Screen(), Screen())
    await slow.$number.load(key("a"), in: cache, options: LoadOptions(refetchInterval: .seconds(30), clock: clock)) {
      server.value("a")
    }
    await quick.$number.load(key("a"), in: cache, options: LoadOptions(refetchInterval: .seconds(10), clock: clock)) {
      server.value("a")
    }
    let history = StateRecorder(slow.$number)
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(10))
    try await history.wait(forCount: 1)
    #expect(server.fetches["a"] == 2)
    quick.$number.reset()  // the 10 s call left: 30 s from the last fetch's end (+10 s)
    #expect(cache.store.entry(for: key("a"))?.revalidation?.pollDeadline == .seconds(40))
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(29))
    await settle(cache)
    #expect(server.fetches["a"] == 2)
    clock.advance(by: .seconds(1))
    try await history.wait(forCount: 2)
    #expect(server.fetches["a"] == 3)
  }

  @Test func pollingStopsWhenThePollingStateLeavesThoughAnotherStaysBound() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = Server()
    let (plain, polling) = (Screen(), Screen())
    await plain.$number.load(key("a"), in: cache) { server.value("a") }
    await polling.$number.load(key("a"), in: cache, options: LoadOptions(refetchInterval: .seconds(10), clock: clock)) {
      server.value("a")
    }
    #expect(cache.store.entry(for: key("a"))?.revalidation?.pollTimer != nil)
    polling.$number.cancel()
    #expect(cache.store.entry(for: key("a"))?.revalidation?.pollTimer == nil)
    clock.advance(by: .seconds(60))
    await settle(cache)
    #expect(server.fetches["a"] == 1)
  }

  @Test func aFocusChangeCostsTheBoundEntriesOnly() async throws {
    let cache = LoadCache(clock: clock)
    for index in 0..<1_000 { cache.set(index, for: CacheKey<Int>("idle", index)) }
    let screen = Screen()
    await screen.$number.load(key("a"), in: cache) { 1 }
    #expect(cache.store.boundEntries.count == 1)
    screen.$number.cancel()
    #expect(cache.store.boundEntries.isEmpty)
  }
}

extension AnyCacheEntry {
  /// Whether the entry's fetch is in flight.
  @MainActor var isBusy: Bool { !isIdle && (self as? CacheEntry<Int>)?.isFetching == true }
}

import Processed
import ProcessedTesting
import Testing

// Outsider tests of "Revalidation: focus, network, interval" (SPEC.md, phase 4), written against the spec's sentences.

@MainActor
private final class RScreen {
  @Loadable var number: LoadableState<Int>
  @Loadable var feed: LoadableState<Pages<Int, Int>>
}

/// Counts fetches per key; each answer is the fetch's number for that key.
@MainActor
private final class RServer {
  var fetches: [String: Int] = [:]
  func value(_ name: String) -> Int {
    fetches[name, default: 0] += 1
    return fetches[name]!
  }
}

/// A one-shot gate for blocks, with a bounded wait for arrivals.
@MainActor
private final class RGate {
  var isOpen = false
  var waiters: [CheckedContinuation<Void, Never>] = []
  func wait() async {
    if isOpen { return }
    await withCheckedContinuation { waiters.append($0) }
  }
  func open() {
    isOpen = true
    let pending = waiters
    waiters = []
    for waiter in pending { waiter.resume() }
  }
  /// Yields until `count` tasks wait here; false if that never happens within many yields.
  func until(_ count: Int) async -> Bool {
    for _ in 0..<10_000 {
      if waiters.count >= count { return true }
      await Task.yield()
    }
    return waiters.count >= count
  }
}

@MainActor
private func yields(_ count: Int = 100) async {
  for _ in 0..<count { await Task.yield() }
}

/// Loads key "a" into `screen` with polling every 10 s, and waits for the load.
@MainActor
private func loadPolling(_ screen: RScreen, in cache: LoadCache, from server: RServer, clock: TestClock) async throws {
  try await screen.$number.load(
    CacheKey<Int>("a"), in: cache, options: LoadOptions(refetchInterval: .seconds(10), clock: clock)
  ) {
    server.value("a")
  }.value(timeLimit: .seconds(20))
}

@MainActor
@Suite struct OutsiderPhase4BRevalidationTests {
  let clock = TestClock()
  func key(_ name: String) -> CacheKey<Int> { CacheKey(name) }

  // MARK: Focus and network returns

  @Test func focusReturnRefetchesStaleBoundEntriesOnly() async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let server = RServer()
    let (stale, fresh, unbound) = (RScreen(), RScreen(), RScreen())
    var gone: RScreen? = RScreen()
    try await stale.$number.load(key("stale"), in: cache) { server.value("stale") }.value(timeLimit: .seconds(20))
    try await unbound.$number.load(key("unbound"), in: cache) { server.value("unbound") }.value(timeLimit: .seconds(20))
    try await gone!.$number.load(key("gone"), in: cache) { server.value("gone") }.value(timeLimit: .seconds(20))
    clock.advance(by: .seconds(60))  // all three stale now
    try await fresh.$number.load(key("fresh"), in: cache) { server.value("fresh") }.value(timeLimit: .seconds(20))
    unbound.$number.cancel()  // unbound, entry kept
    gone = nil  // the state's storage goes: unbound at once
    cache.setFocused(false)
    let history = StateRecorder(stale.$number)
    cache.setFocused(true)
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    await yields()
    #expect(history.values == [.loaded(2)])
    #expect(server.fetches == ["stale": 2, "unbound": 1, "gone": 1, "fresh": 1])
    #expect(fresh.number == .loaded(1) && unbound.number == .loaded(1))
  }

  @Test func networkReturnRefetchesStaleBoundEntriesOnlyAlsoWhileUnfocused() async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let server = RServer()
    let (stale, fresh, unbound) = (RScreen(), RScreen(), RScreen())
    try await stale.$number.load(key("stale"), in: cache) { server.value("stale") }.value(timeLimit: .seconds(20))
    try await unbound.$number.load(key("unbound"), in: cache) { server.value("unbound") }.value(timeLimit: .seconds(20))
    clock.advance(by: .seconds(61))
    try await fresh.$number.load(key("fresh"), in: cache) { server.value("fresh") }.value(timeLimit: .seconds(20))
    unbound.$number.cancel()
    cache.setFocused(false)
    cache.setOnline(false)
    let history = StateRecorder(stale.$number)
    cache.setOnline(true)
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    await yields()
    #expect(history.values == [.loaded(2)])  // no .loading
    #expect(server.fetches == ["stale": 2, "unbound": 1, "fresh": 1])
  }

  @Test func onlyAFalseToTrueChangeIsAReturn() async throws {
    let cache = LoadCache(clock: clock)  // stale at once
    let server = RServer()
    let screen = RScreen()
    try await screen.$number.load(key("a"), in: cache) { server.value("a") }.value(timeLimit: .seconds(20))
    cache.setFocused(true)
    cache.setOnline(true)
    await yields()
    #expect(server.fetches["a"] == 1)
  }

  @Test func severalFocusReturnsInARowFetchOncePerEntry() async throws {
    let cache = LoadCache(clock: clock)
    let server = RServer()
    let screens = [RScreen(), RScreen(), RScreen()]
    for (index, screen) in screens.enumerated() {
      try await screen.$number.load(key("k\(index)"), in: cache) { server.value("k\(index)") }
        .value(timeLimit: .seconds(20))
    }
    let histories = screens.map { StateRecorder($0.$number) }
    for _ in 0..<6 {
      cache.setFocused(false)
      cache.setFocused(true)
      cache.setOnline(false)
      cache.setOnline(true)
      await Task.yield()
    }
    for history in histories { try await history.wait(forCount: 1, timeLimit: .seconds(20)) }
    await yields(300)
    #expect(server.fetches == ["k0": 2, "k1": 2, "k2": 2])
    clock.advance(by: .seconds(4))
    cache.setFocused(false)
    cache.setFocused(true)
    await yields(300)
    #expect(server.fetches == ["k0": 2, "k1": 2, "k2": 2])  // within the 5 s throttle
    clock.advance(by: .seconds(1))
    cache.setFocused(false)
    cache.setFocused(true)  // exactly at the throttle: refetches
    for history in histories { try await history.wait(forCount: 2, timeLimit: .seconds(20)) }
    #expect(server.fetches == ["k0": 3, "k1": 3, "k2": 3])
  }

  @Test func aReturnWhileTheFetchIsInFlightJoinsIt() async throws {
    let cache = LoadCache(clock: clock)
    let gate = RGate()
    var runs = 0
    let screen = RScreen()
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache) {
      runs += 1
      await gate.wait()
      return runs
    }
    #expect(await gate.until(1))
    cache.setOnline(false)
    cache.setOnline(true)
    cache.setFocused(false)
    cache.setFocused(true)
    gate.open()
    try await task.value(timeLimit: .seconds(20))
    await yields()
    #expect(runs == 1)
  }

  // MARK: Offline

  @Test func anOfflineMissShowsLoadingPausedAndRunsWhenTheNetworkReturns() async throws {
    let cache = LoadCache(clock: clock)
    cache.setOnline(false)
    let (one, two) = (RScreen(), RScreen())
    var runs = 0
    let first: Task<Void, Never> = one.$number.load(key("a"), in: cache) {
      runs += 1
      return 7
    }
    let second: Task<Void, Never> = two.$number.load(key("a"), in: cache) {
      runs += 1
      return 8
    }
    await yields()
    #expect(one.number == .loading && two.number == .loading)
    #expect(one.$number.activity.phase == .paused)
    #expect(two.$number.activity.phase == .paused)  // every state waiting for a paused fetch
    #expect(runs == 0)
    cache.setOnline(true)
    try await first.value(timeLimit: .seconds(20))
    try await second.value(timeLimit: .seconds(20))
    #expect(runs == 1)
    #expect(one.number == .loaded(7) && two.number == .loaded(7))
    #expect(one.$number.activity.phase == .idle)
  }

  @Test func anOfflineStaleHitKeepsTheValuePausedAndFetchesOnceOnReturn() async throws {
    let cache = LoadCache(clock: clock)
    let server = RServer()
    let screen = RScreen()
    try await screen.$number.load(key("a"), in: cache) { server.value("a") }.value(timeLimit: .seconds(20))
    cache.setOnline(false)
    let history = StateRecorder(screen.$number)
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache) { server.value("a") }
    await yields()
    #expect(screen.number == .loaded(1))
    #expect(screen.$number.activity.phase == .paused)
    #expect(server.fetches["a"] == 1)
    cache.setOnline(true)  // the paused fetch starts; the network revalidation joins it
    try await task.value(timeLimit: .seconds(20))
    await yields()
    #expect(server.fetches["a"] == 2)
    #expect(history.values == [.loaded(2)])
  }

  @Test func anOfflineRefreshKeepsTheValueAndIsPaused() async throws {
    let cache = LoadCache(clock: clock)
    let server = RServer()
    let screen = RScreen()
    try await screen.$number.load(key("a"), in: cache) { server.value("a") }.value(timeLimit: .seconds(20))
    cache.setOnline(false)
    let task: Task<Void, Never> = screen.$number.refresh(key("a"), in: cache) { server.value("a") }
    await yields()
    #expect(screen.number == .loaded(1))
    #expect(screen.$number.activity.phase == .paused)
    cache.setOnline(true)
    try await task.value(timeLimit: .seconds(20))
    #expect(screen.number == .loaded(2))
    #expect(server.fetches["a"] == 2)
  }

  @Test func anOfflineValueCallerWaitsAndCancellingItEndsItAtOnce() async throws {
    let cache = LoadCache(clock: clock)
    cache.setOnline(false)
    let caller = Task { try await cache.value(for: key("a")) { 5 } }
    let other = Task { try await cache.value(for: key("b")) { 6 } }
    await yields()
    caller.cancel()
    await #expect(throws: CancellationError.self) { try await caller.value(timeLimit: .seconds(20)) }
    cache.setOnline(true)
    #expect(try await other.value(timeLimit: .seconds(20)) == 6)
  }

  @Test func alwaysModeIgnoresTheNetwork() async throws {
    let cache = LoadCache(clock: clock)
    cache.setOnline(false)
    let screen = RScreen()
    try await screen.$number.load(key("a"), in: cache, options: LoadOptions(networkMode: .always, clock: clock)) { 3 }
      .value(timeLimit: .seconds(20))
    #expect(screen.number == .loaded(3))
  }

  @Test func aFocusReturnWhileOfflineMakesOnePausedFetch() async throws {
    let cache = LoadCache(clock: clock)
    let server = RServer()
    let screen = RScreen()
    try await screen.$number.load(key("a"), in: cache) { server.value("a") }.value(timeLimit: .seconds(20))
    cache.setOnline(false)
    cache.setFocused(false)
    cache.setFocused(true)
    await yields()
    #expect(screen.$number.activity.phase == .paused)
    #expect(server.fetches["a"] == 1)
    let history = StateRecorder(screen.$number)
    cache.setOnline(true)
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    await yields(300)
    #expect(server.fetches["a"] == 2)
    #expect(screen.$number.activity.phase == .idle)
  }

  // MARK: Interval

  @Test func anIntervalPollsExactlyAtTheIntervalFromTheEndOfTheLastFetch() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let gate = RGate()
    var runs = 0
    let screen = RScreen()
    let options = LoadOptions(refetchInterval: .seconds(10), clock: clock)
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache, options: options) {
      runs += 1
      if runs == 1 { await gate.wait() }
      return runs
    }
    #expect(await gate.until(1))
    clock.advance(by: .seconds(4))  // the first fetch takes 4 s
    gate.open()
    try await task.value(timeLimit: .seconds(20))
    let history = StateRecorder(screen.$number)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(6))  // 10 s after the start: not yet (counted from the end)
    await yields()
    #expect(runs == 1)
    clock.advance(by: .seconds(4) - .milliseconds(1))
    await yields()
    #expect(runs == 1)
    clock.advance(by: .milliseconds(1))  // exactly 10 s after the end
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    #expect(runs == 2)
    #expect(history.values == [.loaded(2)])
  }

  @Test func pollingStopsWhenTheStateIsCancelledOrGone() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = RServer()
    let options = LoadOptions(refetchInterval: .seconds(10), clock: clock)
    let cancelled = RScreen()
    var gone: RScreen? = RScreen()
    let moved = RScreen()
    try await cancelled.$number.load(key("c"), in: cache, options: options) { server.value("c") }
      .value(timeLimit: .seconds(20))
    try await gone!.$number.load(key("g"), in: cache, options: options) { server.value("g") }
      .value(timeLimit: .seconds(20))
    try await moved.$number.load(key("m"), in: cache, options: options) { server.value("m") }
      .value(timeLimit: .seconds(20))
    cancelled.$number.cancel()
    gone = nil
    try await moved.$number.load(key("other"), in: cache) { server.value("other") }.value(timeLimit: .seconds(20))
    for _ in 0..<5 {
      clock.advance(by: .seconds(10))
      await yields()
    }
    #expect(server.fetches == ["c": 1, "g": 1, "m": 1, "other": 1])
  }

  @Test func theIntervalBelongsToTheEntryOnlyWhileAStateThatAskedForItIsBound() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = RServer()
    let (poller, watcher) = (RScreen(), RScreen())
    try await loadPolling(poller, in: cache, from: server, clock: clock)
    try await watcher.$number.load(key("a"), in: cache) { server.value("a") }.value(timeLimit: .seconds(20))
    let history = StateRecorder(watcher.$number)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(10))
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    #expect(server.fetches["a"] == 2)
    poller.$number.cancel()  // the state that asked for the interval goes; the watcher stays bound
    for _ in 0..<5 {
      clock.advance(by: .seconds(10))
      await yields()
    }
    #expect(server.fetches["a"] == 2)
  }

  @Test func theShortestIntervalAmongBoundStatesWins() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = RServer()
    let (slow, quick) = (RScreen(), RScreen())
    try await slow.$number.load(key("a"), in: cache, options: LoadOptions(refetchInterval: .seconds(30), clock: clock))
    {
      server.value("a")
    }.value(timeLimit: .seconds(20))
    try await quick.$number.load(key("a"), in: cache, options: LoadOptions(refetchInterval: .seconds(5), clock: clock))
    {
      server.value("a")
    }.value(timeLimit: .seconds(20))
    let history = StateRecorder(slow.$number)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(5))
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    #expect(server.fetches["a"] == 2)
  }

  @Test func pollingPausesWithoutFocusAndResumesWithOnePollWhenOverdue() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = RServer()
    let screen = RScreen()
    try await loadPolling(screen, in: cache, from: server, clock: clock)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    cache.setFocused(false)
    for _ in 0..<4 {
      clock.advance(by: .seconds(10))
      await yields()
    }
    #expect(server.fetches["a"] == 1)
    let history = StateRecorder(screen.$number)
    cache.setFocused(true)
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    await yields(300)
    #expect(server.fetches["a"] == 2)  // one poll, which is also the focus revalidation
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(10))
    try await history.wait(forCount: 2, timeLimit: .seconds(20))
    #expect(server.fetches["a"] == 3)
  }

  @Test func refetchInBackgroundPollsWhileUnfocused() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = RServer()
    let screen = RScreen()
    let options = LoadOptions(refetchInterval: .seconds(10), refetchInBackground: true, clock: clock)
    try await screen.$number.load(key("a"), in: cache, options: options) { server.value("a") }
      .value(timeLimit: .seconds(20))
    cache.setFocused(false)
    let history = StateRecorder(screen.$number)
    for tick in 1...2 {
      try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
      clock.advance(by: .seconds(10))
      try await history.wait(forCount: tick, timeLimit: .seconds(20))
    }
    #expect(server.fetches["a"] == 3)
  }

  @Test func pollsDueWhileOfflineBecomeOnePausedFetch() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = RServer()
    let screen = RScreen()
    try await loadPolling(screen, in: cache, from: server, clock: clock)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    cache.setOnline(false)
    for _ in 0..<4 {
      clock.advance(by: .seconds(10))
      await yields()
    }
    #expect(server.fetches["a"] == 1)
    #expect(screen.$number.activity.phase == .paused)
    let history = StateRecorder(screen.$number)
    cache.setOnline(true)
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    await yields(300)
    #expect(server.fetches["a"] == 2)
  }

  // MARK: Paged entries

  typealias Feed = Pages<Int, Int>

  @MainActor
  final class PageServer {
    var version = 0
    var requests: [Int] = []
    func page(_ cursor: Int) -> Feed {
      requests.append(cursor)
      return Feed(
        items: [cursor, cursor + 1, cursor + 2].map { $0 + 100 * version }, nextCursor: cursor < 6 ? cursor + 3 : nil)
    }
  }

  fileprivate func scrolled(
    _ cache: LoadCache, _ server: PageServer, _ key: CacheKey<Feed>, options: LoadOptions? = nil
  )
    async throws -> RScreen
  {
    let screen = RScreen()
    try await screen.$feed.load(key, in: cache, options: options) { server.page(0) }.value(timeLimit: .seconds(20))
    try await screen.$feed.loadMore { cursor in server.page(cursor) }.value(timeLimit: .seconds(20))
    try await screen.$feed.loadMore { cursor in server.page(cursor) }.value(timeLimit: .seconds(20))
    #expect(screen.feed.data?.items == Array(0..<9))
    return screen
  }

  /// A focus return and a network return alike.
  @Test(arguments: ["focus", "network"])
  func aRevalidationOfAPagedEntryRefetchesEveryPageInOrderAndWritesOnce(_ event: String) async throws {
    let cache = LoadCache(clock: clock)
    let server = PageServer()
    let key = CacheKey<Feed>("feed")
    let screen = try await scrolled(cache, server, key)
    server.version = 1
    server.requests = []
    let history = StateRecorder(screen.$feed)
    if event == "focus" {
      cache.setFocused(false)
      cache.setFocused(true)
    } else {
      cache.setOnline(false)
      cache.setOnline(true)
    }
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    await yields(300)
    #expect(server.requests == [0, 3, 6])
    #expect(history.values == [.loaded(Feed(items: Array(100..<109), nextCursor: nil))])
  }

  @Test func aPollOfAPagedEntryRefetchesEveryPageAndWritesOnce() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = PageServer()
    let key = CacheKey<Feed>("feed")
    let screen = try await scrolled(
      cache, server, key, options: LoadOptions(refetchInterval: .seconds(10), clock: clock))
    server.version = 1
    server.requests = []
    let history = StateRecorder(screen.$feed)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(10))
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    await yields(300)
    #expect(server.requests == [0, 3, 6])
    #expect(history.values == [.loaded(Feed(items: Array(100..<109), nextCursor: nil))])
  }
}

// MARK: - Second batch

@MainActor
private final class RModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  var plain: LoadableState<Int> = .absent
}

@MainActor
@Suite struct OutsiderPhase4BRevalidationEdgeTests {
  let clock = TestClock()
  func key(_ name: String) -> CacheKey<Int> { CacheKey(name) }

  @Test func aKeyPathStateWhoseOwnerIsGoneIsNotRevalidated() async throws {
    let cache = LoadCache(clock: clock)
    let server = RServer()
    var model: RModel? = RModel()
    try await model!.load(\.plain, key: key("a"), in: cache) { server.value("a") }.value(timeLimit: .seconds(20))
    let witness = RScreen()
    try await witness.$number.load(key("w"), in: cache) { server.value("w") }.value(timeLimit: .seconds(20))
    model = nil
    let history = StateRecorder(witness.$number)
    cache.setFocused(false)
    cache.setFocused(true)
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    await yields(300)
    #expect(server.fetches == ["a": 1, "w": 2])  // no fetch ever runs for a state that is gone
  }

  @Test func pollingStopsForAKeyPathStateWhoseOwnerIsGone() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = RServer()
    var model: RModel? = RModel()
    try await model!.load(
      \.plain, key: key("a"), in: cache, options: LoadOptions(refetchInterval: .seconds(10), clock: clock)
    ) {
      server.value("a")
    }.value(timeLimit: .seconds(20))
    model = nil
    for _ in 0..<4 {
      clock.advance(by: .seconds(10))
      await yields()
    }
    #expect(server.fetches["a"] == 1)
  }

  @Test func aFetchInTheMiddleOfAnIntervalRestartsTheCount() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = RServer()
    let screen = RScreen()
    try await loadPolling(screen, in: cache, from: server, clock: clock)
    let history = StateRecorder(screen.$number)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(6))
    cache.invalidate(key("a"))  // a fetch that ends at +6
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    #expect(server.fetches["a"] == 2)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(4))  // +10: counted from the end of the last fetch, not yet
    await yields()
    #expect(server.fetches["a"] == 2)
    clock.advance(by: .seconds(6))  // +16
    try await history.wait(forCount: 2, timeLimit: .seconds(20))
    #expect(server.fetches["a"] == 3)
  }

  @Test func focusReturnWithAnOverduePollAndAStaleValueFetchesOnce() async throws {
    let cache = LoadCache(clock: clock)  // stale at once
    let server = RServer()
    let screen = RScreen()
    try await loadPolling(screen, in: cache, from: server, clock: clock)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    cache.setFocused(false)
    clock.advance(by: .seconds(25))
    await yields()
    let history = StateRecorder(screen.$number)
    cache.setFocused(true)
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    await yields(300)
    #expect(server.fetches["a"] == 2)
  }

  @Test func throttleWindowsArePerEntry() async throws {
    let cache = LoadCache(clock: clock)
    let server = RServer()
    let (one, two) = (RScreen(), RScreen())
    try await one.$number.load(key("a"), in: cache) { server.value("a") }.value(timeLimit: .seconds(20))
    let historyA = StateRecorder(one.$number)
    cache.setFocused(false)
    cache.setFocused(true)  // a revalidated at +0
    try await historyA.wait(forCount: 1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(2))
    try await two.$number.load(key("b"), in: cache) { server.value("b") }.value(timeLimit: .seconds(20))
    let historyB = StateRecorder(two.$number)
    clock.advance(by: .seconds(1))
    cache.setFocused(false)
    cache.setFocused(true)  // +3: a is throttled, b never revalidated
    try await historyB.wait(forCount: 1, timeLimit: .seconds(20))
    await yields(300)
    #expect(server.fetches == ["a": 2, "b": 2])
  }

  @Test func aStateCancelledWhilePausedLeavesNoFetchToRunOnReturn() async throws {
    let cache = LoadCache(clock: clock)
    cache.setOnline(false)
    let screen = RScreen()
    var runs = 0
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache) {
      runs += 1
      return 1
    }
    await yields()
    screen.$number.cancel()
    try await task.value(timeLimit: .seconds(20))
    cache.setOnline(true)
    await yields(300)
    #expect(runs == 0)
    #expect(cache.value(for: key("a")) == nil)
  }

  @Test func aSetWhileAFetchIsPausedShowsAtOnceAndNothingHangs() async throws {
    let cache = LoadCache(clock: clock)
    cache.setOnline(false)
    let screen = RScreen()
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache) { 1 }
    await yields()
    cache.set(42, for: key("a"))
    #expect(screen.number == .loaded(42))
    cache.setOnline(true)
    try await task.value(timeLimit: .seconds(20))
    await yields(300)
    // The paused fetch starts after the set (its answer was asked for after it): either outcome is consistent.
    #expect(screen.number.data == cache.value(for: key("a")))
    #expect(screen.$number.activity.phase == .idle)
  }

  @Test func focusLostAndRegainedBeforeATickIsDueResumesWithoutAnExtraPoll() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = RServer()
    let screen = RScreen()
    try await loadPolling(screen, in: cache, from: server, clock: clock)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(3))
    cache.setFocused(false)
    clock.advance(by: .seconds(2))
    cache.setFocused(true)  // +5: no tick overdue, the value is fresh: nothing fetches
    await yields(300)
    #expect(server.fetches["a"] == 1)
    let history = StateRecorder(screen.$number)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(5))  // +10
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    #expect(server.fetches["a"] == 2)
  }

  @Test func backgroundPollingWhenAnyBoundStateAskedForIt() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let server = RServer()
    let (one, two) = (RScreen(), RScreen())
    try await one.$number.load(key("a"), in: cache, options: LoadOptions(refetchInterval: .seconds(10), clock: clock)) {
      server.value("a")
    }.value(timeLimit: .seconds(20))
    try await two.$number.load(
      key("a"), in: cache, options: LoadOptions(refetchInterval: .seconds(10), refetchInBackground: true, clock: clock)
    ) { server.value("a") }.value(timeLimit: .seconds(20))
    cache.setFocused(false)
    let history = StateRecorder(one.$number)
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(10))
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    #expect(server.fetches["a"] == 2)
  }

  @Test func aFreshValueForFetchWhileOfflineReturnsAtOnce() async throws {
    let cache = LoadCache(staleTime: .seconds(100), clock: clock)
    cache.set(3, for: key("a"))
    cache.setOnline(false)
    let value = try await Task { try await cache.value(for: key("a")) { 4 } }.value(timeLimit: .seconds(20))
    #expect(value == 3)
  }

  @Test func aStaleValueForFetchWhileOfflineReturnsAtOnce() async throws {
    let cache = LoadCache(clock: clock)
    cache.set(3, for: key("a"))
    clock.advance(by: .seconds(1))
    cache.setOnline(false)
    let value = try await Task { try await cache.value(for: key("a")) { 4 } }.value(timeLimit: .seconds(20))
    #expect(value == 3)
  }

  @Test func anOfflineMutationShowsItsUpdateAndWaitsThenRuns() async throws {
    let cache = LoadCache(staleTime: .seconds(100), clock: clock)
    cache.set(1, for: key("a"))
    let screen = RScreen()
    try await screen.$number.load(key("a"), in: cache) { 0 }.value(timeLimit: .seconds(20))
    cache.setOnline(false)
    var ran = false
    let mutation = Task { @MainActor in
      try await cache.mutate(key("a"), optimistic: { $0 += 10 }) { ran = true }
    }
    await yields()
    #expect(screen.number == .loaded(11))
    #expect(!ran)
    #expect(screen.$number.activity.phase == .idle)  // activity of bound states unchanged
    cache.setOnline(true)
    try await mutation.value(timeLimit: .seconds(20))
    #expect(ran)
  }

  @Test func aPausedMutationWhoseCallerIsCancelledIsUndoneAndNeverRuns() async throws {
    let cache = LoadCache(staleTime: .seconds(100), clock: clock)
    cache.set(1, for: key("a"))
    cache.setOnline(false)
    var ran = false
    let mutation = Task { @MainActor in
      try await cache.mutate(key("a"), optimistic: { $0 += 10 }) { ran = true }
    }
    await yields()
    #expect(cache.value(for: key("a")) == 11)
    mutation.cancel()
    await #expect(throws: CancellationError.self) { try await mutation.value(timeLimit: .seconds(20)) }
    #expect(cache.value(for: key("a")) == 1)
    cache.setOnline(true)
    await yields(300)
    #expect(!ran)
  }

  @Test func anOfflinePagedRevalidationRefetchesEveryPageOnReturn() async throws {
    let cache = LoadCache(clock: clock)
    let server = OutsiderPhase4BRevalidationTests.PageServer()
    let key = CacheKey<Pages<Int, Int>>("feed")
    let screen = RScreen()
    try await screen.$feed.load(key, in: cache) { server.page(0) }.value(timeLimit: .seconds(20))
    try await screen.$feed.loadMore { cursor in server.page(cursor) }.value(timeLimit: .seconds(20))
    server.version = 1
    server.requests = []
    cache.setOnline(false)
    cache.setFocused(false)
    cache.setFocused(true)  // one paused fetch
    await yields()
    #expect(screen.$feed.activity.phase == .paused)
    let history = StateRecorder(screen.$feed)
    cache.setOnline(true)
    try await history.wait(forCount: 1, timeLimit: .seconds(20))
    await yields(300)
    #expect(server.requests == [0, 3])
    #expect(history.values == [.loaded(Pages(items: Array(100..<106), nextCursor: 6))])
  }

  @Test func aPagedFocusRevalidationThatFailsMidwayKeepsTheListAndWritesNothing() async throws {
    struct Down: Error {}
    let cache = LoadCache(clock: clock)
    let screen = RScreen()
    @MainActor final class Server {
      var failing = false
      var requests: [Int] = []
    }
    let server = Server()
    let page = { @MainActor (cursor: Int) throws -> Pages<Int, Int> in
      server.requests.append(cursor)
      if server.failing && cursor == 3 { throw Down() }
      return Pages(items: [cursor, cursor + 1, cursor + 2], nextCursor: cursor < 6 ? cursor + 3 : nil)
    }
    try await screen.$feed.load(CacheKey<Pages<Int, Int>>("feed"), in: cache) { try page(0) }.value(
      timeLimit: .seconds(20))
    try await screen.$feed.loadMore { cursor in try page(cursor) }.value(timeLimit: .seconds(20))
    try await screen.$feed.loadMore { cursor in try page(cursor) }.value(timeLimit: .seconds(20))
    server.failing = true
    server.requests = []
    let history = StateRecorder(screen.$feed)
    let activity = StateRecorder(activityOf: screen.$feed)
    cache.setFocused(false)
    cache.setFocused(true)
    try await activity.wait(until: { (a: LoadActivity) in a.lastError != nil }, timeLimit: .seconds(20))
    await yields(300)
    #expect(server.requests == [0, 3])
    #expect(history.values.isEmpty)
    #expect(screen.feed.data?.items == Array(0..<9))
  }
}

// MARK: - Minimal reproductions of the defects found (see FINDINGS.md)

@MainActor
@Suite struct OutsiderPhase4BDefectTests {
  let clock = TestClock()

  /// Control: invalidation touches the entry and runs no fetch for a key-path state whose owner is gone (passes).
  @Test func control_invalidateRunsNoFetchForAGoneKeyPathOwner() async throws {
    let cache = LoadCache(clock: clock)
    var runs = 0
    var model: RModel? = RModel()
    try await model!.load(\.plain, key: CacheKey<Int>("a"), in: cache) {
      runs += 1; return runs
    }
    .value(timeLimit: .seconds(20))
    model = nil
    cache.invalidate(CacheKey<Int>("a"))
    await yields(300)
    #expect(runs == 1)
  }

  @Test func focusReturnRunsAFetchForAGoneKeyPathOwner() async throws {
    let cache = LoadCache(clock: clock)  // staleTime zero: stale at once
    var runs = 0
    var model: RModel? = RModel()
    try await model!.load(\.plain, key: CacheKey<Int>("a"), in: cache) {
      runs += 1; return runs
    }
    .value(timeLimit: .seconds(20))
    model = nil
    cache.setFocused(false)
    cache.setFocused(true)
    await yields(300)
    #expect(runs == 1)  // fails: 2
  }

  @Test func networkReturnRunsAFetchForAGoneKeyPathOwner() async throws {
    let cache = LoadCache(clock: clock)
    var runs = 0
    var model: RModel? = RModel()
    try await model!.load(\.plain, key: CacheKey<Int>("a"), in: cache) {
      runs += 1; return runs
    }
    .value(timeLimit: .seconds(20))
    model = nil
    cache.setOnline(false)
    cache.setOnline(true)
    await yields(300)
    #expect(runs == 1)  // fails: 2
  }

  @Test func aPollRunsAFetchForAGoneKeyPathOwner() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    var runs = 0
    var model: RModel? = RModel()
    try await model!.load(
      \.plain, key: CacheKey<Int>("a"), in: cache, options: LoadOptions(refetchInterval: .seconds(10), clock: clock)
    ) {
      runs += 1; return runs
    }.value(timeLimit: .seconds(20))
    model = nil
    try await clock.waitForCacheTimers(1, timeLimit: .seconds(20))
    clock.advance(by: .seconds(10))
    await yields(300)
    #expect(runs == 1)  // fails: 2
  }
}

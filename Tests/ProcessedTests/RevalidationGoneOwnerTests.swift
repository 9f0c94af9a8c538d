import ProcessedTesting
import Testing

@testable import Processed

/// A key-path state whose owner went away stays listed on its entry until the cache next touches it. A focus return, a
/// network return and a poll touch it: none of them fetches for the state that is gone (spec, "Phase-3 rules made
/// precise" and "Revalidation"). Found from outside.
@MainActor
@Suite struct RevalidationGoneOwnerTests {
  let clock = TestClock()

  @MainActor
  final class Model: LoadableSupport {
    var number: LoadableState<Int> = .absent
  }

  /// Counts the fetches; `runs` is read after the cache has gone idle.
  @MainActor
  final class Server {
    var runs = 0
    func value() -> Int {
      runs += 1
      return runs
    }
  }

  /// Loads `key` into a model's plain property, then releases the model (checked through a weak reference).
  func loadAndRelease(
    _ key: CacheKey<Int>, in cache: LoadCache, options: LoadOptions? = nil, server: Server
  ) async throws {
    var model: Model? = Model()
    weak let released = model
    try await model!.load(\.number, key: key, in: cache, options: options) { server.value() }
      .value(timeLimit: .seconds(30))
    model = nil
    #expect(released == nil)
  }

  /// Checks that no fetch ran (a fetch started for the gone state would have run its block by the time the main actor
  /// has run every job queued), then that the entry is idle (its collection timer set) and is collected.
  func expectCollectedWithoutAFetch(_ cache: LoadCache, _ server: Server) async throws {
    for _ in 0..<100 { await Task.yield() }
    #expect(server.runs == 1)
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(10))
    await cache.nextCollection()
    #expect(cache.count == 0)
    #expect(server.runs == 1)
  }

  @Test func aFocusReturnRunsNoFetchForAStateWhoseOwnerIsGone() async throws {
    let cache = LoadCache(gcTime: .seconds(10), clock: clock)  // staleTime zero: stale at once
    let server = Server()
    try await loadAndRelease(CacheKey("a"), in: cache, server: server)
    cache.setFocused(false)
    cache.setFocused(true)
    #expect(cache.store.boundEntries.isEmpty)
    try await expectCollectedWithoutAFetch(cache, server)
  }

  @Test func aNetworkReturnRunsNoFetchForAStateWhoseOwnerIsGone() async throws {
    let cache = LoadCache(gcTime: .seconds(10), clock: clock)
    let server = Server()
    try await loadAndRelease(CacheKey("a"), in: cache, server: server)
    cache.setOnline(false)
    cache.setOnline(true)
    #expect(cache.store.boundEntries.isEmpty)
    try await expectCollectedWithoutAFetch(cache, server)
  }

  @Test func aPollRunsNoFetchForAStateWhoseOwnerIsGoneAndPollingStops() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    var runs = 0
    var model: Model? = Model()
    weak let released = model
    let polling = LoadOptions(refetchInterval: .seconds(10), clock: clock)
    try await model!.load(\.number, key: CacheKey("a"), in: cache, options: polling) {
      runs += 1
      return runs
    }.value(timeLimit: .seconds(30))
    model = nil
    #expect(released == nil)
    try await clock.waitForCacheTimers(1)  // the poll timer
    clock.advance(by: .seconds(10))
    // A fetch started for the gone state would have run its block by the time the main actor has run every job
    // queued.
    for _ in 0..<300 { await Task.yield() }
    #expect(runs == 1)
    // No next tick either: polling stopped with the last state.
    clock.advance(by: .seconds(10))
    for _ in 0..<300 { await Task.yield() }
    #expect(runs == 1)
  }

  /// A live state beside the gone one is still revalidated.
  @Test func aLiveStateOnAnotherEntryStillRefetches() async throws {
    let cache = LoadCache(gcTime: .seconds(10), clock: clock)
    let (gone, live) = (Server(), Server())
    try await loadAndRelease(CacheKey("gone"), in: cache, server: gone)
    let model = Model()
    await model.load(\.number, key: CacheKey("live"), in: cache) { live.value() }
    let history = StateRecorder(model.loadables.number)
    cache.setFocused(false)
    cache.setFocused(true)
    try await history.wait(forCount: 1)
    #expect(history.values == [.loaded(2)])
    #expect(live.runs == 2)
    #expect(gone.runs == 1)
  }
}

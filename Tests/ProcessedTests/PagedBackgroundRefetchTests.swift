import ProcessedTesting
import Testing

@testable import Processed

/// A paged entry refetched in the background — an invalidation, the end of a mutation, a stale hit — fetches every
/// page it had loaded, in order from the first, and writes the list once; a user's `refresh` starts over (spec,
/// "Phase-3 rules made precise": "So liking a post on page 3 never collapses the feed").
@MainActor
@Suite struct PagedBackgroundRefetchTests {
  typealias Feed = Pages<Int, Int>
  let key = CacheKey<Feed>("feed")

  /// A feed of three pages served by a "server" whose items carry a version, so a refetch is told from the first
  /// fetch; it counts the requests, first page and next pages apart.
  @MainActor
  final class Server {
    var version = 0
    var firstPages = 0
    var cursors: [Int] = []
    var failAt: Int?

    func page(_ cursor: Int) throws -> Feed {
      if cursor == 0 { firstPages += 1 } else { cursors.append(cursor) }
      if failAt == cursor { throw Failure() }
      return Pages(
        items: [cursor, cursor + 1, cursor + 2].map { $0 + 100 * version },
        nextCursor: cursor + 3 < 9 ? cursor + 3 : nil)
    }
  }

  struct Failure: Error, Equatable {}

  /// Three pages on screen (two `loadMore`s through two different faces).
  func scrolledFeed(_ cache: LoadCache, _ server: Server) async -> PagedFeedModel {
    let model = PagedFeedModel()
    await model.$feed.load(key, in: cache) { try server.page(0) }
    await model.$feed.loadMore { cursor in try server.page(cursor) }
    await model.loadables.feed.loadMore { cursor in try server.page(cursor) }
    #expect(model.feed.data?.items == Array(0..<9))
    return model
  }

  @Test func theEndOfAMutationRefetchesEveryLoadedPageAndWritesTheListOnce() async throws {
    let cache = LoadCache(staleTime: .seconds(60))
    let server = Server()
    let model = await scrolledFeed(cache, server)
    let history = StateRecorder(model.$feed)
    server.version = 1
    // Like the post on page 3: the optimistic update shows at once, the end of the mutation refetches.
    try await cache.mutate(key, optimistic: { $0.items[7] = -7 }) { () }
    var liked = Array(0..<9)
    liked[7] = -7
    // Wait for the refetch (the state is bound and waits for the entry's fetch).
    try await history.wait(forCount: 2)
    let refetched = Feed(items: Array(100..<109), nextCursor: nil)
    #expect(history.values == [.loaded(Feed(items: liked, nextCursor: nil)), .loaded(refetched)])
    #expect(server.firstPages == 2)
    #expect(server.cursors == [3, 6, 3, 6])  // in order, from the first cursor
    #expect(cache.value(for: key) == refetched)
  }

  @Test func anInvalidationAndAStaleHitRefetchEveryPage() async throws {
    let clock = TestClock()
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    let server = Server()
    let model = await scrolledFeed(cache, server)
    server.version = 1
    cache.invalidate(key)
    await model.$feed.load(key, in: cache) { try server.page(0) }  // joins the invalidation's fetch
    #expect(model.feed == .loaded(Feed(items: Array(100..<109), nextCursor: nil)))
    server.version = 2
    clock.advance(by: .seconds(10))
    let other = PagedFeedModel()
    let history = StateRecorder(other.$feed)
    await other.$feed.load(key, in: cache) { try server.page(0) }  // stale: shows the list, refetches every page
    #expect(
      history.values == [
        .loaded(Feed(items: Array(100..<109), nextCursor: nil)),
        .loaded(Feed(items: Array(200..<209), nextCursor: nil)),
      ])
    #expect(model.feed == other.feed)
    #expect(server.cursors == [3, 6, 3, 6, 3, 6])
  }

  @Test func aFailedPageKeepsTheOldListAndWritesNothing() async throws {
    let cache = LoadCache(staleTime: .seconds(60))
    let server = Server()
    let model = await scrolledFeed(cache, server)
    let history = StateRecorder(model.$feed)
    server.version = 1
    server.failAt = 6
    cache.invalidate(key)
    await model.$feed.load(key, in: cache) { try server.page(0) }
    #expect(history.values.isEmpty)  // nothing per page, and the failure keeps the list
    #expect(model.feed.data?.items == Array(0..<9))
    #expect(model.$feed.activity.lastError as? Failure == Failure())
    #expect(cache.value(for: key)?.items == Array(0..<9))
  }

  @Test func aUsersRefreshStartsOverWithTheFirstPage() async throws {
    let cache = LoadCache(staleTime: .seconds(60))
    let server = Server()
    let model = await scrolledFeed(cache, server)
    server.version = 1
    await model.$feed.refresh(key, in: cache) { try server.page(0) }
    #expect(model.feed == .loaded(Feed(items: [100, 101, 102], nextCursor: 3)))
    #expect(server.cursors == [3, 6])
    // Pages counted again from there: one `loadMore`, then an invalidation refetches two pages.
    await model.$feed.loadMore { cursor in try server.page(cursor) }
    cache.invalidate(key)
    await model.$feed.load(key, in: cache) { try server.page(0) }
    #expect(model.feed == .loaded(Feed(items: Array(100..<106), nextCursor: 6)))
    #expect(server.cursors == [3, 6, 3, 3])
  }
}

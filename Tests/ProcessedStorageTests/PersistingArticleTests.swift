import Processed
import ProcessedStorage
import ProcessedTesting
import Testing

extension CacheKey where Value == [String] {
  fileprivate static func feed(_ user: Int) -> Self { CacheKey("feed", user).persisted() }
}

/// The "Persisting the Cache Between Launches" article, as it shows it: a `LoadCache` with a `FileCacheStorage`, two
/// launches on one directory.
@MainActor
@Suite struct PersistingArticleTests {
  @MainActor
  final class FeedScreen {
    @Loadable var posts: LoadableState<[String]>
  }

  @Test func theSecondLaunchShowsTheStoredFeedAtOnceThenTheFreshOne() async throws {
    try await TemporaryDirectory.with { directory in
      let storage = FileCacheStorage(directory: directory.cache + "/feed", version: "3", maxAge: .seconds(7 * 86_400))
      do {
        let cache = LoadCache(storage: storage)
        let screen = FeedScreen()
        await screen.$posts.load(.feed(1), in: cache) { ["yesterday"] }
        await cache.flush()  // going to the background
      }
      // The next launch: a new cache, a new storage on the same directory.
      let cache = LoadCache(
        storage: FileCacheStorage(directory: directory.cache + "/feed", version: "3", maxAge: .seconds(7 * 86_400)))
      let screen = FeedScreen()
      let states = StateRecorder(screen.$posts)
      await screen.$posts.load(.feed(1), in: cache) { ["today"] }
      #expect(states.values == [.loaded(["yesterday"]), .loaded(["today"])])  // no .loading
      var events = cache.storageEvents.makeAsyncIterator()
      guard case .restored(let name) = await events.next() else {
        Issue.record("expected .restored")
        return
      }
      #expect(name == CacheKey<[String]>.feed(1).storageName)
    }
  }

  @Test func anotherVersionStartsAfresh() async throws {
    try await TemporaryDirectory.with { directory in
      do {
        let cache = LoadCache(storage: FileCacheStorage(directory: directory.cache, version: "3"))
        cache.set(["old shape"], for: .feed(1))
        await cache.flush()
      }
      let cache = LoadCache(storage: FileCacheStorage(directory: directory.cache, version: "4"))
      let screen = FeedScreen()
      let states = StateRecorder(screen.$posts)
      await screen.$posts.load(.feed(1), in: cache) { ["new shape"] }
      #expect(states.values == [.loading, .loaded(["new shape"])])  // an ordinary miss
    }
  }
}

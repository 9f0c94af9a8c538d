import ProcessedTesting
import Testing

@testable import Processed

// The examples of Processed.docc/SharingAValueBetweenScreens.md, as the article shows them (`api.profile` is a
// closure here). Keep both in step.

private struct Profile: Equatable, Sendable {
  var name: String
}

extension CacheKey where Value == Profile {
  fileprivate static func profile(_ id: Int) -> Self { CacheKey("profile", id) }
}

@MainActor
private final class HeaderModel {
  @Loadable var profile: LoadableState<Profile>
  private let cache: LoadCache
  private let fetch: @MainActor (Int) async throws -> Profile

  init(cache: LoadCache, fetch: @escaping @MainActor (Int) async throws -> Profile) {
    self.cache = cache
    self.fetch = fetch
  }

  func appear(id: Int) async {
    await $profile.load(.profile(id), in: cache) { [fetch] in try await fetch(id) }
  }
}

@MainActor
private final class SettingsModel: LoadableSupport {
  var profile: LoadableState<Profile> = .absent
  private let cache: LoadCache
  private let fetch: @MainActor (Int) async throws -> Profile

  init(cache: LoadCache, fetch: @escaping @MainActor (Int) async throws -> Profile) {
    self.cache = cache
    self.fetch = fetch
  }

  func appear(id: Int) async {
    await load(\.profile, key: .profile(id), in: cache) { [fetch] in try await fetch(id) }
  }

  func pullToRefresh(id: Int) async {
    await refresh(\.profile, key: .profile(id), in: cache) { [fetch] in try await fetch(id) }
  }
}

private struct Offline: Error, Equatable {}

private struct Comment: Equatable, Sendable {
  var text: String
}

extension CacheKey where Value == [Comment] {
  fileprivate static func comments(_ post: Int) -> Self { CacheKey("comments", post) }
}

@MainActor
private final class CommentComposer {
  @Process var send
  private let cache: LoadCache
  private let upload: @MainActor (Comment) async throws -> Void

  init(cache: LoadCache, upload: @escaping @MainActor (Comment) async throws -> Void) {
    self.cache = cache
    self.upload = upload
  }

  func post(_ draft: Comment, on post: Int) {
    $send.run {
      try await self.cache.mutate(.comments(post), optimistic: { $0.append(draft) }) {
        try await self.upload(draft)
      }
    }
  }
}

@MainActor
private final class CommentsScreen {
  @Loadable var comments: LoadableState<[Comment]>
}

@MainActor
private final class Outbox {
  private(set) var failed: [Comment] = []
  private let cache: LoadCache
  private let upload: @MainActor (Comment) async throws -> Void

  init(cache: LoadCache, upload: @escaping @MainActor (Comment) async throws -> Void) {
    self.cache = cache
    self.upload = upload
  }

  @discardableResult
  func post(_ draft: Comment, on post: Int) -> Task<Void, Never> {
    Task {
      do {
        try await cache.mutate(.comments(post), optimistic: { $0.append(draft) }) {
          try await self.upload(draft)
        }
      } catch {
        failed.append(draft)
      }
    }
  }
}

private struct Post: Equatable, Sendable, Identifiable {
  let id: Int
  var likes: Int
}

extension CacheKey where Value == [Post] {
  fileprivate static var posts: Self { CacheKey("posts") }
}

extension CacheKey where Value == Post {
  fileprivate static func post(_ id: Int) -> Self { CacheKey("post", id) }
}

@MainActor
private func like(_ id: Int, in cache: LoadCache, send: @MainActor (Int) async throws -> Void) async throws {
  try await cache.mutate(
    .posts,
    optimistic: { posts in
      if let index = posts.firstIndex(where: { $0.id == id }) { posts[index].likes += 1 }
    }
  ) {
    try await cache.mutate(.post(id), optimistic: { $0.likes += 1 }) {
      try await send(id)
    }
  }
}

@MainActor
private func openPost(
  _ id: Int, on screen: PostScreen, cache: LoadCache, fetch: @escaping @MainActor (Int) async throws -> Post
)
  async
{
  if cache.value(for: .post(id)) == nil, let summary = cache.value(for: .posts)?.first(where: { $0.id == id }) {
    cache.set(summary, for: .post(id))
    cache.invalidate(.post(id))  // stale: the load below fetches in the background
  }
  await screen.$post.load(.post(id), in: cache) { try await fetch(id) }
}

@MainActor
private final class PostScreen {
  @Loadable var post: LoadableState<Post>
}

@MainActor
@Suite struct SharingArticleTests {
  let clock = TestClock()

  /// "Two screens, one value": the second screen joins the first one's fetch; one request, one value.
  @Test func twoScreensShareOneFetch() async throws {
    let cache = LoadCache(staleTime: .seconds(30), clock: clock)
    let gate = Gate()
    var requests = 0
    let fetch: @MainActor (Int) async throws -> Profile = { id in
      requests += 1
      await gate.wait()
      return Profile(name: "user \(id)")
    }
    let header = HeaderModel(cache: cache, fetch: fetch)
    let settings = SettingsModel(cache: cache, fetch: fetch)
    async let shown: Void = header.appear(id: 42)
    async let alsoShown: Void = settings.appear(id: 42)  // joins the header's fetch
    await gate.untilWaiting(1)
    gate.open()
    _ = await (shown, alsoShown)
    #expect(requests == 1)
    #expect(header.profile == .loaded(Profile(name: "user 42")))
    #expect(header.profile == settings.profile)
  }

  /// "Fresh, stale, miss, gc": a fresh hit runs no block; the defaults are staleTime zero and gcTime five minutes.
  @Test func freshStaleAndTheDefaults() async throws {
    let defaults = LoadCache()
    #expect(defaults.staleTime == .zero)
    #expect(defaults.gcTime == .seconds(300))

    let cache = LoadCache(clock: clock)  // staleTime zero: every load fetches again in the background
    let header = HeaderModel(cache: cache) { _ in Profile(name: "Ada") }
    await header.appear(id: 1)
    let recorder = StateRecorder(header.$profile)
    var ran = false
    let task: Task<Void, Never> = header.$profile.load(.profile(1), in: cache) {
      ran = true
      throw Offline()
    }
    #expect(recorder.values.isEmpty)  // no .loading, and the value it shows is not written again
    try await task.value(timeLimit: .seconds(30))
    #expect(ran)
    #expect(header.profile == .loaded(Profile(name: "Ada")))  // a failed background fetch keeps the value
    #expect(header.$profile.activity.lastError as? Offline == Offline())
  }

  /// "Fresh, stale, miss, gc": an idle entry goes at gcTime; reading it does not keep it.
  @Test func anIdleEntryIsCollectedAfterGcTime() async throws {
    let cache = LoadCache(clock: clock)
    cache.set(Profile(name: "Ada"), for: .profile(1))
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(299))
    #expect(cache.value(for: .profile(1)) == Profile(name: "Ada"))
    clock.advance(by: .seconds(1))
    await cache.nextCollection()
    #expect(cache.count == 0)
    #expect(cache.value(for: .profile(1)) == nil)
  }

  /// "Two screens, one value": a pull to refresh on one screen reaches the other, with no `.loading`.
  @Test func pullToRefreshReachesEveryScreen() async throws {
    let cache = LoadCache(staleTime: .seconds(30), clock: clock)
    var version = 0
    let fetch: @MainActor (Int) async throws -> Profile = { _ in
      version += 1
      return Profile(name: "v\(version)")
    }
    let header = HeaderModel(cache: cache, fetch: fetch)
    let settings = SettingsModel(cache: cache, fetch: fetch)
    await header.appear(id: 1)
    await settings.appear(id: 1)  // fresh: no fetch
    #expect(version == 1)
    let recorder = StateRecorder(header.$profile)
    await settings.pullToRefresh(id: 1)
    #expect(version == 2)
    #expect(settings.profile == .loaded(Profile(name: "v2")))
    #expect(recorder.values == [.loaded(Profile(name: "v2"))])
  }

  /// "Invalidation and writes".
  @Test func invalidationAndWrites() async throws {
    let cache = LoadCache(staleTime: .seconds(30), clock: clock)
    var version = 0
    let header = HeaderModel(cache: cache) { id in
      version += 1
      return Profile(name: "\(id) v\(version)")
    }
    await header.appear(id: 1)
    let recorder = StateRecorder(header.$profile)

    // A bound entry fetches again at once, showing the old value meanwhile.
    cache.invalidate(.profile(1))
    await until(.changes(of: header.$profile)) { version == 2 && header.profile == .loaded(Profile(name: "1 v2")) }
    #expect(recorder.values == [.loaded(Profile(name: "1 v2"))])

    // By prefix, across value types; an entry with no bound state fetches on its next load.
    cache.set(Profile(name: "2 set"), for: .profile(2))
    cache.set("note", for: CacheKey<String>("profile", 9))
    cache.invalidate(prefix: "profile")
    await until(.changes(of: header.$profile)) { header.profile == .loaded(Profile(name: "1 v3")) }
    let other = HeaderModel(cache: cache) { _ in Profile(name: "2 fetched") }
    await other.appear(id: 2)
    #expect(other.profile == .loaded(Profile(name: "2 fetched")))

    // `set` writes every bound state at once.
    cache.set(Profile(name: "saved"), for: .profile(1))
    #expect(header.profile == .loaded(Profile(name: "saved")))

    // `remove` and `removeAll` unbind: the states keep what they show.
    cache.remove(.profile(1))
    cache.set(Profile(name: "after remove"), for: .profile(1))
    #expect(header.profile == .loaded(Profile(name: "saved")))
    cache.removeAll()
    cache.set(Profile(name: "after removeAll"), for: .profile(2))
    #expect(other.profile == .loaded(Profile(name: "2 fetched")))
    #expect(cache.count == 1)
  }

  /// "When a state stops following the entry": a write through the wrapper unbinds; a write to a plain stored
  /// property of a `LoadableSupport` class does not, `reset(\.x)` does.
  @Test func manualWritesAndReset() async throws {
    let cache = LoadCache(staleTime: .seconds(30), clock: clock)
    let fetch: @MainActor (Int) async throws -> Profile = { _ in Profile(name: "Ada") }
    let header = HeaderModel(cache: cache, fetch: fetch)
    let settings = SettingsModel(cache: cache, fetch: fetch)
    await header.appear(id: 1)
    await settings.appear(id: 1)

    header.profile = .absent
    settings.profile = .absent  // not seen by the library: still bound
    cache.set(Profile(name: "Grace"), for: .profile(1))
    #expect(header.profile == .absent)
    #expect(settings.profile == .loaded(Profile(name: "Grace")))

    settings.reset(\.profile)
    cache.set(Profile(name: "Linus"), for: .profile(1))
    #expect(settings.profile == .absent)
  }

  /// "Testing": the article's test, as it shows it.
  @Test func aProfileIsFetchedAgainOnceItIsStale() async {
    let clock = TestClock()
    let cache = LoadCache(staleTime: .seconds(30), clock: clock)
    var fetches = 0
    let header = HeaderModel(cache: cache) { _ in
      fetches += 1
      return Profile(name: "Ada \(fetches)")
    }
    let recorder = StateRecorder(header.$profile)

    await header.appear(id: 42)  // a miss: fetches
    clock.advance(by: .seconds(29))
    await header.appear(id: 42)  // fresh: no fetch
    #expect(fetches == 1)

    clock.advance(by: .seconds(1))
    await header.appear(id: 42)  // stale: shows the value, fetches in the background
    #expect(fetches == 2)
    #expect(
      recorder.values == [
        .loading, .loaded(Profile(name: "Ada 1")), .loaded(Profile(name: "Ada 2")),
      ])
  }

  /// "Optimistic updates": the draft shows at once on a bound screen, and goes away when the upload fails.
  @Test func aRejectedCommentIsTakenBack() async throws {
    let cache = LoadCache(clock: clock)
    let screen = CommentsScreen()
    await screen.$comments.load(.comments(1), in: cache) { [Comment(text: "first")] }
    let uploading = Gate()
    let composer = CommentComposer(cache: cache) { _ in
      await uploading.wait()
      throw Offline()
    }
    let sent = StateRecorder(composer.$send)
    composer.post(Comment(text: "second"), on: 1)
    await uploading.untilWaiting(1)
    #expect(screen.comments == .loaded([Comment(text: "first"), Comment(text: "second")]))
    let refetched = StateRecorder(screen.$comments)
    uploading.open()
    try await sent.wait(forCount: 2)  // .running, then .failed
    #expect(composer.send.hasFailed)
    #expect(screen.comments == .loaded([Comment(text: "first")]))
    try await refetched.wait(forCount: 2)  // taken back, then the invalidation's fetch
    #expect(screen.comments == .loaded([Comment(text: "first")]))
  }

  /// "Optimistic updates", the warning: with `$send.run`, a second comment supersedes the first, whose upload is
  /// cancelled and whose draft is taken back — the trap the article names.
  @Test func aSecondRunCancelsTheFirstCommentsUpload() async throws {
    let cache = LoadCache(clock: clock)
    let screen = CommentsScreen()
    await screen.$comments.load(.comments(1), in: cache) { [] }
    var uploaded: [String] = []
    let gate = Gate()
    let composer = CommentComposer(cache: cache) { draft in
      await gate.wait()
      try Task.checkCancellation()
      uploaded.append(draft.text)
    }
    composer.post(Comment(text: "one"), on: 1)
    await gate.untilWaiting(1)
    composer.post(Comment(text: "two"), on: 1)
    await gate.untilWaiting(2)
    gate.open()
    try await StateRecorder(composer.$send).wait(until: { $0.last?.hasFinished == true })
    #expect(uploaded == ["two"])  // "one" was lost
  }

  /// "Optimistic updates": the outbox gives each comment its own task; the second finishing first returns at once,
  /// and both reach the server.
  @Test func theOutboxKeepsBothComments() async throws {
    let cache = LoadCache(clock: clock)
    let screen = CommentsScreen()
    await screen.$comments.load(.comments(1), in: cache) { [] }
    let (first, second) = (Gate(), Gate())
    var uploaded: [String] = []
    let outbox = Outbox(cache: cache) { draft in
      await (draft.text == "one" ? first : second).wait()
      uploaded.append(draft.text)
    }
    let one = outbox.post(Comment(text: "one"), on: 1)
    let two = outbox.post(Comment(text: "two"), on: 1)
    await first.untilWaiting(1)
    await second.untilWaiting(1)
    #expect(screen.comments == .loaded([Comment(text: "one"), Comment(text: "two")]))
    second.open()
    try await two.value(timeLimit: .seconds(30))  // returns while "one" still uploads
    #expect(screen.comments == .loaded([Comment(text: "one"), Comment(text: "two")]))  // both still shown
    first.open()
    try await one.value(timeLimit: .seconds(30))
    #expect(uploaded == ["two", "one"])
    #expect(outbox.failed.isEmpty)
  }

  /// "One change, two keys": both show the like at once; a failed request takes it back from both; a success
  /// invalidates both.
  @Test func aLikeReachesTheListAndTheDetail() async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let list = ListScreen()
    let detail = PostScreen()
    var server = Post(id: 7, likes: 0)
    await list.$posts.load(.posts, in: cache) { [server] }
    await detail.$post.load(.post(7), in: cache) { server }
    struct Rejected: Error {}
    await #expect(throws: Rejected.self) {
      try await like(7, in: cache) { _ in
        #expect(list.posts.data?.first?.likes == 1)
        #expect(detail.post.data?.likes == 1)
        throw Rejected()
      }
    }
    #expect(list.posts.data?.first?.likes == 0)
    #expect(detail.post.data?.likes == 0)
    let listHistory = StateRecorder(list.$posts)
    let detailHistory = StateRecorder(detail.$post)
    try await like(7, in: cache) { _ in server.likes = 1 }
    try await listHistory.wait(until: { $0.last == .loaded([Post(id: 7, likes: 1)]) && $0.count == 2 })
    try await detailHistory.wait(until: { $0.last == .loaded(Post(id: 7, likes: 1)) && $0.count == 2 })
    // Shown at once (one write each), then the invalidations' fetches (the server's answer).
    #expect(listHistory.values == [.loaded([Post(id: 7, likes: 1)]), .loaded([Post(id: 7, likes: 1)])])
  }

  /// "Showing a detail from the list at once": the seeded value shows with no `.loading`, then the fetch's.
  @Test func aDetailOpensWithTheListsValue() async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    cache.set([Post(id: 3, likes: 5)], for: .posts)
    let screen = PostScreen()
    let history = StateRecorder(screen.$post)
    await openPost(3, on: screen, cache: cache) { id in Post(id: id, likes: 6) }
    #expect(history.values == [.loaded(Post(id: 3, likes: 5)), .loaded(Post(id: 3, likes: 6))])
  }
}

@MainActor
private final class ListScreen {
  @Loadable var posts: LoadableState<[Post]>
}

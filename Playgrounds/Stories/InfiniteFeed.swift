import Processed

// 13. Paged lists: a feed that loads more at the bottom, a double-triggered "load more", a failing page, a refresh.

/// A stand-in server with 7 posts, 3 per page; the cursor is the index of the next post.
@MainActor
final class PostServer {
  var requests: [Int] = []
  var failNext = false

  func posts(from cursor: Int) async throws -> Pages<String, Int> {
    requests.append(cursor)
    try await Task.sleep(for: .milliseconds(5))
    if failNext {
      failNext = false
      throw StoryError.offline
    }
    let end = min(cursor + 3, 7)
    return Pages(items: (cursor..<end).map { "post \($0)" }, nextCursor: end < 7 ? end : nil)
  }
}

enum StoryError: Error { case offline }

/// An infinite-scroll screen.
@MainActor
final class FeedList {
  @Loadable var feed: LoadableState<Pages<String, Int>>
  let server: PostServer

  init(server: PostServer) {
    self.server = server
  }

  func appear() async {
    await $feed.load { [server] in try await server.posts(from: 0) }
  }

  func reachedBottom() -> Task<Void, Never> {
    $feed.loadMore { [server] cursor in try await server.posts(from: cursor) }
  }

  var summary: String {
    guard let pages = feed.data else { return "\(feed)" }
    return "\(pages.items.count) posts, \(pages.hasMore ? "more to come" : "the end")"
  }
}

extension Stories {
  @MainActor
  static func infiniteFeed() async {
    print("\n13. An infinite feed (loadMore)")
    let server = PostServer()
    let list = FeedList(server: server)
    await list.appear()
    print("   first page: \(list.summary)")

    // The bottom is reached twice in a row (a fast scroll): the second call joins the first.
    let first = list.reachedBottom()
    let second = list.reachedBottom()
    await first.value
    await second.value
    print("   scrolled to the bottom twice: \(list.summary); pages asked for: \(server.requests)")

    // A page fails: the list stays, the error is kept beside it, and the next call asks for the same page.
    server.failNext = true
    await list.reachedBottom().value
    print("   a page failed: \(list.summary); lastError: \(String(describing: list.$feed.activity.lastError))")
    await list.reachedBottom().value
    print("   tried again: \(list.summary); pages asked for: \(server.requests)")

    // At the end, loadMore does nothing; a refresh starts over from the first page.
    await list.reachedBottom().value
    await list.$feed.refresh { [server] in try await server.posts(from: 0) }
    print("   pulled to refresh: \(list.summary); pages asked for: \(server.requests)")
  }
}

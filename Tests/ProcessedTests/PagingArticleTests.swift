import Testing

@testable import Processed

// The example of LoadingPageByPage.md (Processed.docc), as the article shows it. Keep both in step.

/// LoadingPageByPage.md
enum PagingArticle {
  struct Post: Equatable, Sendable {
    var id: Int
    var title: String
  }

  @MainActor
  final class FeedViewModel {
    @Loadable var feed: LoadableState<Pages<Post, Int>>
    private let fetchPage: @MainActor (_ after: Int?) async throws -> Pages<Post, Int>

    init(fetchPage: @escaping @MainActor (_ after: Int?) async throws -> Pages<Post, Int>) {
      self.fetchPage = fetchPage
    }

    /// The screen appears, or the user pulls to refresh: the first page, the rest dropped.
    func refresh() async {
      await $feed.refresh { [fetchPage] in try await fetchPage(nil) }
    }

    /// The last row became visible.
    @discardableResult
    func reachedBottom() -> Task<Void, Never> {
      $feed.loadMore { [fetchPage] cursor in try await fetchPage(cursor) }
    }
  }
}

@MainActor
@Suite struct PagingArticleTests {
  typealias FeedViewModel = PagingArticle.FeedViewModel
  typealias Post = PagingArticle.Post

  @Test func aFastScrollLoadsEachPageOnce() async {
    var cursors: [Int?] = []
    let model = FeedViewModel { cursor in  // 5 posts, 2 per page
      cursors.append(cursor)
      let start = cursor ?? 0
      let end = min(start + 2, 5)
      return Pages(items: (start..<end).map { Post(id: $0, title: "Post \($0)") }, nextCursor: end < 5 ? end : nil)
    }
    await model.refresh()
    let first = model.reachedBottom()
    let second = model.reachedBottom()  // a fast scroll: joins the first call
    await first.value
    await second.value
    #expect(model.feed.data?.items.map(\.id) == [0, 1, 2, 3])

    await model.reachedBottom().value
    await model.reachedBottom().value  // no more pages: does nothing
    #expect(model.feed.data?.items.map(\.id) == [0, 1, 2, 3, 4])
    #expect(model.feed.data?.hasMore == false)
    #expect(cursors == [nil, 2, 4])
  }

  @Test func aPullToRefreshDuringAPageWinsAndDropsTheRest() async {
    let gate = Gate()
    var pageCalls = 0
    let model = FeedViewModel { cursor in
      guard let cursor else { return Pages(items: [Post(id: 0, title: "fresh")], nextCursor: 1) }
      pageCalls += 1
      await gate.wait()
      return Pages(items: [Post(id: cursor, title: "old page")], nextCursor: nil)
    }
    model.feed = .loaded(Pages(items: [Post(id: 9, title: "stale")], nextCursor: 1))
    let page = model.reachedBottom()
    await gate.untilWaiting(1)
    await model.refresh()  // ends first
    gate.open()
    await page.value
    #expect(pageCalls == 1)
    #expect(model.feed == .loaded(Pages(items: [Post(id: 0, title: "fresh")], nextCursor: 1)))
  }
}

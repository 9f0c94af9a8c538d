import ProcessedTesting
import Testing

@testable import Processed

/// A paged list: `Pages` and `loadMore` on the wrapper, the key-path and the `loadables` faces.
@MainActor
final class PagedFeedModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  @Loadable var feed: LoadableState<Pages<Int, Int>>
  var keyPathFeed: LoadableState<Pages<Int, Int>> = .absent
}

@MainActor
@Suite struct LoadMoreTests {
  struct Failure: Error, Equatable {}

  /// A page of three items from `cursor`, with a next cursor until 9.
  static func page(_ cursor: Int) -> Pages<Int, Int> {
    Pages(items: [cursor, cursor + 1, cursor + 2], nextCursor: cursor + 3 < 9 ? cursor + 3 : nil)
  }

  @Test func pagesAreAppendedInOrderUntilThereIsNoNextCursor() async {
    let model = PagedFeedModel()
    let history = StateRecorder(model.$feed)
    await model.$feed.load { Self.page(0) }
    var cursors: [Int] = []
    for _ in 0..<4 {
      await model.$feed.loadMore { cursor in
        cursors.append(cursor)
        return Self.page(cursor)
      }
    }
    #expect(cursors == [3, 6])  // the fourth call found no next page
    #expect(model.feed == .loaded(Pages(items: Array(0..<9), nextCursor: nil)))
    #expect(
      history.values == [
        .loading, .loaded(Self.page(0)), .loaded(Pages(items: Array(0..<6), nextCursor: 6)),
        .loaded(Pages(items: Array(0..<9), nextCursor: nil)),
      ])  // no .loading for a page
    #expect(model.feed.data?.hasMore == false)
  }

  @Test func itemsAreAppendedAsReturned() async {
    let model = PagedFeedModel()
    model.feed = .loaded(Pages(items: [1, 2], nextCursor: 2))
    await model.$feed.loadMore { _ in Pages(items: [2, 2], nextCursor: 7) }  // no de-duplication
    #expect(model.feed == .loaded(Pages(items: [1, 2, 2, 2], nextCursor: 7)))
  }

  @Test(arguments: NoOpState.allCases)
  func loadMoreDoesNothingUnlessLoadedWithMorePages(_ start: NoOpState) async {
    let model = PagedFeedModel()
    switch start {
    case .absent: break
    case .error: model.feed = .error(Failure())
    case .noMorePages: model.feed = .loaded(Pages(items: [1], nextCursor: nil))
    case .loading: model.feed = .loading
    }
    let history = StateRecorder(model.$feed)
    var activity: [LoadActivity] = []
    let token = model.$feed.observeActivity { activity.append($0) }
    var ran = false
    let task: Task<Void, Never> = model.$feed.loadMore { cursor in
      ran = true
      return Self.page(cursor)
    }
    #expect(!model.$feed.activity.isActive)
    await task.value
    await model.$feed.loadMore { cursor in
      ran = true
      return Self.page(cursor)
    }
    await model.loadMore(\.keyPathFeed) { cursor in
      ran = true
      return Self.page(cursor)
    }
    #expect(!ran)
    #expect(history.values.isEmpty)
    #expect(activity.isEmpty)
    token.cancel()
  }

  enum NoOpState: CaseIterable, Sendable { case absent, error, noMorePages, loading }

  @Test(arguments: [false, true])
  func loadMoreDoesNothingWhileALoadOrRefreshIsInProgress(_ refreshing: Bool) async {
    let model = PagedFeedModel()
    model.feed = .loaded(Self.page(0))
    let gate = Gate()
    let block: @MainActor () async throws -> Pages<Int, Int> = {
      await gate.wait()
      return Self.page(0)
    }
    let load: Task<Void, Never> =
      refreshing ? model.$feed.refresh(block: block) : model.$feed.load(block: block)
    var ran = false
    await model.$feed.loadMore { cursor in
      ran = true
      return Self.page(cursor)
    }
    #expect(!ran)
    #expect(model.$feed.activity.isActive)  // the load goes on
    gate.open()
    await load.value
    #expect(model.feed == .loaded(Self.page(0)))
  }

  @Test func aSecondLoadMoreJoinsTheFirstAndThePageIsFetchedOnce() async {
    let model = PagedFeedModel()
    model.feed = .loaded(Self.page(0))
    let gate = Gate()
    var fetched: [Int] = []
    let block: @MainActor (Int) async throws -> Pages<Int, Int> = { cursor in
      fetched.append(cursor)
      await gate.wait()
      return Self.page(cursor)
    }
    let first: Task<Void, Never> = model.$feed.loadMore(block: block)
    let second: Task<Void, Never> = model.$feed.loadMore(block: block)
    let third = Task { await model.$feed.loadMore(block: block) }
    await gate.untilWaiting(1)
    #expect(model.$feed.activity.phase == .running(attempt: 1))
    gate.open()
    await first.value
    await second.value
    await third.value
    #expect(fetched == [3])
    #expect(model.feed == .loaded(Pages(items: Array(0..<6), nextCursor: 6)))
  }

  @Test func cancellingAJoiningCallEndsOnlyThatCall() async {
    let model = PagedFeedModel()
    model.feed = .loaded(Self.page(0))
    let gate = Gate()
    let first: Task<Void, Never> = model.$feed.loadMore { cursor in
      await gate.wait()
      return Self.page(cursor)
    }
    await gate.untilWaiting(1)
    let joining: Task<Void, Never> = model.$feed.loadMore { _ in
      Issue.record("a joining call ran its block")
      return Self.page(99)
    }
    joining.cancel()
    await joining.value  // ended while the fetch goes on
    #expect(model.$feed.activity.isActive)
    gate.open()
    await first.value
    #expect(model.feed == .loaded(Pages(items: Array(0..<6), nextCursor: 6)))
  }

  @Test func cancellingTheStartingCallCancelsTheFetchForAll() async throws {
    let model = PagedFeedModel()
    let clock = TestClock()
    model.feed = .loaded(Self.page(0))
    let first: Task<Void, Never> = model.$feed.loadMore { cursor in
      try await clock.sleep(for: .seconds(1))
      return Self.page(cursor)
    }
    try await clock.waitForSleepers(1)
    let joining: Task<Void, Never> = model.$feed.loadMore { _ in Self.page(99) }
    first.cancel()
    await first.value
    await joining.value
    #expect(model.feed == .loaded(Self.page(0)))
    #expect(!model.$feed.activity.isActive)
  }

  @Test(arguments: Superseder.allCases)
  func aNewerWriteSupersedesALoadMoreAndItsPageIsNeverAppended(_ superseder: Superseder) async {
    let model = PagedFeedModel()
    model.feed = .loaded(Self.page(0))
    let gate = Gate()
    let more: Task<Void, Never> = model.$feed.loadMore { cursor in
      await gate.wait()  // ignores cancellation
      return Self.page(cursor)
    }
    await gate.untilWaiting(1)
    let first = Pages(items: [100], nextCursor: 101)
    switch superseder {
    case .load: await model.$feed.load { first }
    case .refresh: await model.$feed.refresh { first }
    case .joinRunningLoad: await model.$feed.load(options: LoadOptions(overlap: .joinRunning)) { first }
    case .reset: model.$feed.reset()
    case .cancel: model.$feed.cancel()
    case .manualWrite: model.feed = .loaded(first)
    }
    gate.open()
    await more.value
    let expected: LoadableState<Pages<Int, Int>> =
      switch superseder {
      case .reset: .absent
      case .cancel: .loaded(Self.page(0))
      default: .loaded(first)
      }
    #expect(model.feed == expected)
  }

  enum Superseder: CaseIterable, Sendable { case load, refresh, joinRunningLoad, reset, cancel, manualWrite }

  @Test func aFailureKeepsTheListAndTheNextCallAsksForTheSameCursor() async {
    let model = PagedFeedModel()
    model.feed = .loaded(Self.page(0))
    let history = StateRecorder(model.$feed)
    var cursors: [Int] = []
    await model.$feed.loadMore { cursor in
      cursors.append(cursor)
      throw Failure()
    }
    #expect(model.feed == .loaded(Self.page(0)))
    #expect(model.$feed.activity.lastError is Failure)
    await model.$feed.loadMore { cursor in
      cursors.append(cursor)
      return Self.page(cursor)
    }
    #expect(cursors == [3, 3])
    #expect(model.$feed.activity.lastError == nil)  // success clears it
    #expect(history.values == [.loaded(Pages(items: Array(0..<6), nextCursor: 6))])
  }

  @Test func aPageIsRetriedOnTheOptionsClock() async throws {
    let model = PagedFeedModel()
    let clock = TestClock()
    model.feed = .loaded(Self.page(0))
    var attempts = 0
    let options = LoadOptions(
      retry: .exponential(maxRetries: 2, initialDelay: .seconds(1), jitter: .none), clock: clock)
    let task: Task<Void, Never> = model.$feed.loadMore(options: options) { cursor in
      attempts += 1
      if attempts < 3 { throw Failure() }
      return Self.page(cursor)
    }
    try await clock.waitForSleepers(1)
    #expect(model.$feed.activity.phase == .retrying(attempt: 2))
    #expect(model.feed == .loaded(Self.page(0)))  // nothing written between attempts
    clock.advance(by: .seconds(1))
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(2))
    await task.value
    #expect(attempts == 3)
    #expect(model.feed == .loaded(Pages(items: Array(0..<6), nextCursor: 6)))
  }

  @Test func debounceAndCalmPresentationDoNotApply() async throws {
    let clock = TestClock()
    let model = PagedFeedModel()
    model.feed = .loaded(Self.page(0))
    let options = LoadOptions(
      debounce: .trailing(.seconds(1)), loadingDelay: .seconds(1), minimumLoadingTime: .seconds(1), clock: clock)
    await model.$feed.loadMore(options: options) { cursor in Self.page(cursor) }  // no wait on the clock
    #expect(model.feed == .loaded(Pages(items: Array(0..<6), nextCursor: 6)))
    #expect(clock.sleeperCount == 0)
  }

  @Test func controlErrorsActAsResetAndCancel() async {
    let model = PagedFeedModel()
    model.feed = .loaded(Self.page(0))
    await model.$feed.loadMore { _ in throw CancelLoadable() }
    #expect(model.feed == .loaded(Self.page(0)))
    #expect(model.$feed.activity.lastError == nil)
    await model.$feed.loadMore { _ in throw ResetLoadable() }
    #expect(model.feed == .absent)
  }

  @Test func keyPathAndLoadablesFacesAppendToo() async {
    let model = PagedFeedModel()
    model.keyPathFeed = .loaded(Self.page(0))
    let history = StateRecorder(model, \.keyPathFeed)
    await model.loadMore(\.keyPathFeed) { cursor in Self.page(cursor) }
    let task: Task<Void, Never> = model.loadables.keyPathFeed.loadMore { cursor in Self.page(cursor) }
    await task.value
    await model.loadMore(\.feed) { _ in Pages(items: [], nextCursor: nil) }  // a wrapper through its key path: no page
    model.feed = .loaded(Self.page(0))
    await model.loadMore(\.feed) { cursor in Self.page(cursor) }
    #expect(model.keyPathFeed == .loaded(Pages(items: Array(0..<9), nextCursor: nil)))
    #expect(history.values.count == 2)
    #expect(model.feed == .loaded(Pages(items: Array(0..<6), nextCursor: 6)))
  }

  @Test func aKeyPathLoadMoreIsJoinedAndCancelled() async {
    let model = PagedFeedModel()
    model.keyPathFeed = .loaded(Self.page(0))
    let gate = Gate()
    var fetched = 0
    let first: Task<Void, Never> = model.loadMore(\.keyPathFeed) { cursor in
      fetched += 1
      await gate.wait()
      return Self.page(cursor)
    }
    let second: Task<Void, Never> = model.loadMore(\.keyPathFeed) { cursor in
      fetched += 1
      return Self.page(cursor)
    }
    await gate.untilWaiting(1)
    #expect(model.loadables.keyPathFeed.activity.isActive)
    model.cancel(\.keyPathFeed)
    await second.value  // the joined call ends with it
    gate.open()
    await first.value
    #expect(fetched == 1)
    #expect(model.keyPathFeed == .loaded(Self.page(0)))
  }
}

/// `loadMore` on states bound to a `LoadCache` key: the entry holds the pages.
@MainActor
@Suite struct CachedLoadMoreTests {
  struct Failure: Error, Equatable {}
  typealias Feed = Pages<Int, Int>
  let key = CacheKey<Feed>("feed")

  @Test func aPageGoesToTheEntryAndEveryBoundStateAndIsFetchedOnce() async {
    let cache = LoadCache(staleTime: .seconds(60))
    let first = PagedFeedModel()
    let second = PagedFeedModel()
    await first.$feed.load(key, in: cache) { LoadMoreTests.page(0) }
    await second.load(\.keyPathFeed, key: key, in: cache) { LoadMoreTests.page(0) }  // a fresh hit
    let history = StateRecorder(second, \.keyPathFeed)
    let gate = Gate()
    var fetched: [Int] = []
    let block: @MainActor (Int) async throws -> Feed = { cursor in
      fetched.append(cursor)
      await gate.wait()
      return LoadMoreTests.page(cursor)
    }
    let more: Task<Void, Never> = first.$feed.loadMore(block: block)
    let joined: Task<Void, Never> = second.loadMore(\.keyPathFeed, block: block)  // the other screen joins
    await gate.untilWaiting(1)
    #expect(second.loadables.keyPathFeed.activity.isActive)
    gate.open()
    await more.value
    await joined.value
    let appended = Feed(items: Array(0..<6), nextCursor: 6)
    #expect(fetched == [3])
    #expect(first.feed == .loaded(appended))
    #expect(second.keyPathFeed == .loaded(appended))
    #expect(cache.value(for: key) == appended)
    #expect(history.values == [.loaded(appended)])
  }

  @Test func refreshingTheKeyFetchesTheFirstPageAgainAndDropsTheRest() async {
    let cache = LoadCache(staleTime: .seconds(60))
    let model = PagedFeedModel()
    await model.$feed.load(key, in: cache) { LoadMoreTests.page(0) }
    await model.$feed.loadMore { cursor in LoadMoreTests.page(cursor) }
    #expect(model.feed.data?.items.count == 6)
    await model.$feed.refresh(key, in: cache) { LoadMoreTests.page(0) }
    #expect(model.feed == .loaded(LoadMoreTests.page(0)))
    #expect(cache.value(for: key) == LoadMoreTests.page(0))
    await model.$feed.loadMore { cursor in LoadMoreTests.page(cursor) }
    cache.invalidate(key)  // a background refetch: the first page's block, then the page's, for the two pages
    await model.$feed.load(key, in: cache) { LoadMoreTests.page(0) }
    #expect(model.feed == .loaded(Feed(items: Array(0..<6), nextCursor: 6)))
  }

  @Test func aFailedPageKeepsTheListOnEveryBoundState() async {
    let cache = LoadCache(staleTime: .seconds(60))
    let first = PagedFeedModel()
    let second = PagedFeedModel()
    await first.$feed.load(key, in: cache) { LoadMoreTests.page(0) }
    await second.$feed.load(key, in: cache) { LoadMoreTests.page(0) }
    await first.$feed.loadMore { _ in throw Failure() }
    #expect(first.feed == .loaded(LoadMoreTests.page(0)))
    #expect(second.feed == .loaded(LoadMoreTests.page(0)))
    #expect(first.$feed.activity.lastError is Failure)
    #expect(cache.value(for: key) == LoadMoreTests.page(0))
    await first.$feed.loadMore { cursor in LoadMoreTests.page(cursor) }  // the same cursor again
    #expect(second.feed.data?.items == Array(0..<6))
    #expect(first.$feed.activity.lastError == nil)
  }
}

import Observation
import ProcessedTesting
import Testing

@testable import Processed

// The examples of the load-policy articles (Processed.docc: Debouncing, JoiningARunningLoad, LimitingConcurrentLoads,
// Retrying), as the articles show them. Keep both in step.

/// Debouncing.md
enum DebouncingArticle {
  @MainActor
  final class SearchModel {
    @Loadable var results: LoadableState<[String]>
    private let search: @Sendable (String) async throws -> [String]

    init(
      clock: any Clock<Duration> = ContinuousClock(),
      search: @escaping @Sendable (String) async throws -> [String]
    ) {
      _results = Loadable(options: LoadOptions(debounce: .trailing(.milliseconds(300)), clock: clock))
      self.search = search
    }

    /// Called on every keystroke.
    func queryChanged(to query: String) {
      $results.load { [search] in try await search(query) }
    }
  }
}

/// JoiningARunningLoad.md
enum JoiningArticle {
  @MainActor
  final class EditorModel {
    @Processed.Process(options: LoadOptions(overlap: .joinRunning)) var saving
    private(set) var saves = 0
    private let upload: @MainActor () async throws -> Void

    init(upload: @escaping @MainActor () async throws -> Void) {
      self.upload = upload
    }

    func saveTapped() async {
      await $saving.run {
        self.saves += 1
        try await self.upload()
      }
    }
  }
}

/// LimitingConcurrentLoads.md
enum LimitingArticle {
  @MainActor
  final class Gallery {
    let thumbnails: [Loadable<String>]
    let limiter = LoadLimiter(maxConcurrent: 4)
    private let download: @MainActor (Int) async throws -> String

    init(count: Int, download: @escaping @MainActor (Int) async throws -> String) {
      thumbnails = (0..<count).map { _ in Loadable<String>() }
      self.download = download
    }

    func loadAll() async {
      let options = LoadOptions(limiter: limiter)
      let tasks = thumbnails.enumerated().map { index, thumbnail -> Task<Void, Never> in
        thumbnail.projectedValue.load(options: options) { try await self.download(index) }
      }
      for task in tasks { await task.value }
    }
  }
}

/// Retrying.md
enum RetryingArticle {
  struct Unavailable: Error {}

  @MainActor
  final class FeedModel {
    @Loadable var feed: LoadableState<[String]>
    private(set) var attempts = 0

    init(clock: any Clock<Duration> = ContinuousClock()) {
      let retry = RetryPolicy.exponential(maxRetries: 3, initialDelay: .seconds(1), jitter: .full) { error in
        error is Unavailable  // retry only what is worth retrying
      }
      _feed = Loadable(options: LoadOptions(retry: retry, clock: clock))
    }

    func refresh() {
      $feed.load {
        self.attempts += 1
        if self.attempts < 3 { throw Unavailable() }
        return ["first post"]
      }
    }
  }
}

/// StateAndActivity.md (the model; the SwiftUI view is Apple-only). `api` is a closure here.
enum StateAndActivityArticle {
  @MainActor
  final class FeedModel: ObservableModel, Observable {
    let observers = ObserverRegistry()
    @Loadable var feed: LoadableState<[String]>
    @Observed var activity = LoadActivity()
    private var tokens: Set<ObservationToken> = []
    let api: @MainActor () async throws -> [String]

    init(api: @escaping @MainActor () async throws -> [String]) {
      self.api = api
      $feed.observeActivity { [unowned self] in activity = $0 }.store(in: &tokens)
    }

    func pullToRefresh() async {
      await $feed.refresh { try await self.api() }
    }
  }
}

@MainActor
@Suite struct PolicyArticleTests {
  @Test func typingRunsOneSearch() async throws {
    let clock = TestClock()
    let model = DebouncingArticle.SearchModel(clock: clock) { query in [query.uppercased()] }
    let recorder = StateRecorder(model.$results)

    for query in ["s", "sw", "swi"] {
      model.queryChanged(to: query)
    }
    try await clock.waitForSleepers(1)  // only the last call still waits
    #expect(recorder.values.isEmpty)  // no .loading while typing
    clock.advance(by: .milliseconds(300))
    try await recorder.wait(forCount: 2)
    #expect(recorder.values == [.loading, .loaded(["SWI"])])
  }

  @Test func aDoubleTappedSaveSavesOnce() async {
    let upload = Gate()
    let editor = JoiningArticle.EditorModel { await upload.wait() }
    let first = Task { await editor.saveTapped() }
    await until(.arrivals(at: upload)) { upload.waiting == 1 }
    let tapped = Signal()
    let second = Task {
      tapped.fire()
      // Joins the first save before this task first suspends, so before the wait below goes on.
      await editor.saveTapped()
    }
    await until(.signal(tapped)) { tapped.count == 1 }
    upload.open()
    await first.value
    await second.value
    #expect(editor.saves == 1)
    #expect(editor.saving.hasFinished)
  }

  @Test func theGalleryNeverRunsMoreThanFourDownloads() async {
    var downloading = 0
    var mostAtOnce = 0
    let gallery = LimitingArticle.Gallery(count: 20) { index in
      downloading += 1
      mostAtOnce = max(mostAtOnce, downloading)
      await Task.yield()  // the download
      downloading -= 1
      return "thumbnail \(index)"
    }
    await gallery.loadAll()
    #expect(mostAtOnce == 4)
    #expect(gallery.limiter.running == 0 && gallery.limiter.waiting == 0)
    #expect(gallery.thumbnails.map(\.wrappedValue) == (0..<20).map { .loaded("thumbnail \($0)") })
  }

  @Test func theFeedIsRetriedUntilItLoads() async throws {
    let clock = TestClock()
    let model = RetryingArticle.FeedModel(clock: clock)
    let recorder = StateRecorder(model.$feed)

    model.refresh()
    for _ in 1...2 {
      try await clock.waitForSleepers(1)  // a retry delay (jittered, at most 1 s, then 2 s)
      clock.advance(by: .seconds(2))
    }
    try await recorder.wait(forCount: 2)
    #expect(model.attempts == 3)
    #expect(recorder.values == [.loading, .loaded(["first post"])])  // nothing between attempts
  }

  @Test func theFeedStaysOnScreenThroughAFailedRefresh() async {
    struct Offline: Error {}
    final class Server { var online = true }
    let server = Server()
    let model = StateAndActivityArticle.FeedModel { if server.online { return ["a", "b"] } else { throw Offline() } }
    var activities: [Bool] = []
    let token = model.observe(\.activity) { activities.append($0.isActive) }
    await model.pullToRefresh()  // from .absent: an ordinary load
    #expect(model.feed == .loaded(["a", "b"]))
    server.online = false
    await model.pullToRefresh()
    #expect(model.feed == .loaded(["a", "b"]))
    #expect(model.$feed.lastValue == ["a", "b"])
    #expect(model.activity.lastError is Offline)
    #expect(activities == [true, false, true, false])
    token.cancel()
  }
}

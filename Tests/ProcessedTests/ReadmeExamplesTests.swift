// The README's examples, compiled and run. Keep them in sync with README.md.
import ProcessedTesting
import Testing

@testable import Processed

@MainActor
final class ReadmeNumbersViewModel: ObservableModel {
  let observers = ObserverRegistry()
  @Loadable var numbers: LoadableState<[Int]>

  func refresh() async {
    await $numbers.load {
      try await Task.sleep(for: .milliseconds(20))
      return [1, 2, 3]
    }
  }
}

@MainActor
final class ReadmeEditorViewModel: ObservableModel, ProcessSupport {
  enum Action: Equatable, Sendable { case save, delete }

  let observers = ObserverRegistry()
  var action: ProcessState<Action> = .idle

  func save() {
    run(\.action, as: .save) {
      try await persist()  // no `self.` needed
    }
  }

  func persist() async throws {}
}

@MainActor
final class ReadmeSearchViewModel {
  @Loadable var results: LoadableState<[String]>
  private let search: @Sendable (String) async throws -> [String]

  init(
    clock: any Clock<Duration> = ContinuousClock(),  // a TestClock in tests
    search: @escaping @Sendable (String) async throws -> [String]
  ) {
    let options = LoadOptions(
      retry: .standard, timeout: .seconds(10), debounce: .trailing(.milliseconds(300)), clock: clock)
    _results = Loadable(options: options)
    self.search = search
  }

  func queryChanged(to query: String) {
    $results.load { [search] in  // one search per pause in typing; retried with backoff; 10 s per attempt
      LoadProgress.report(fraction: nil, message: "searching \(query)")
      return try await search(query)
    }
  }

  var status: String {
    switch $results.activity.phase {
    case .idle: "idle"
    case .debouncing: "waiting for you to stop typing"
    case .waiting: "queued"
    case .running(let attempt): attempt == 1 ? "searching" : "searching (attempt \(attempt))"
    case .retrying(let attempt): "retrying (attempt \(attempt))"
    case .paused: "offline"
    }
  }
}

/// The cheat sheet's model: the clock comes in through `init`, which sets the declared options.
@MainActor
final class ReadmeCheatSheetFeedModel {
  @Loadable var feed: LoadableState<[String]>
  @Process var saving

  init(clock: any Clock<Duration> = ContinuousClock()) {
    _feed = Loadable(options: LoadOptions(retry: .standard, timeout: .seconds(10), clock: clock))
    _saving = Process(options: LoadOptions(overlap: .joinRunning, clock: clock))
  }
}

extension CacheKey where Value == [String] {
  fileprivate static func posts(by author: String) -> Self { CacheKey("posts", author) }
}

@MainActor
final class RequestCounter {
  var count = 0
}

@MainActor
final class ReadmeFeedViewModel {
  @Loadable var posts: LoadableState<[String]>
  let cache: LoadCache  // one for the app, shared by every screen
  // Not in the README: counts the block's runs. A box the block captures, not the model: the entry keeps the block,
  // and a block that held the model would keep model and cache alive through each other (the README's warning).
  let counter = RequestCounter()
  var requests: Int { counter.count }

  init(cache: LoadCache) { self.cache = cache }

  func appear(author: String) async {
    await $posts.load(.posts(by: author), in: cache) { [counter] in
      counter.count += 1
      return ["\(author)'s first post"]  // your request here
    }
  }
}

actor ReadmeConfigStore {
  @IsolatedLoadable var config: LoadableState<[String: String]> = .absent
  private var fetches = 0

  func refresh() async {
    await $config.refresh(options: LoadOptions(retry: .standard, timeout: .seconds(5))) {
      self.fetches += 1  // the actor's own state: no `await`, nothing `Sendable`
      return ["mode": "fast"]  // your request here
    }
  }

  func value(for key: String) -> String? { $config.lastValue?[key] }

  var fetchCount: Int { fetches }  // not in the README
}

@MainActor
@Suite struct ReadmeExamplesTests {
  /// "A load": the README's `main.swift`, with `print` replaced by collecting what it would print.
  @Test func aLoad() async {
    var printed: [String] = []
    let model = ReadmeNumbersViewModel()
    let token = model.observe(\.numbers) { state in printed.append(String(describing: state)) }
    await model.refresh()  // returns when the load has ended
    token.cancel()
    #expect(printed == ["LoadableState.loading", "LoadableState.loaded([1, 2, 3])"])
    #expect(model.numbers == .loaded([1, 2, 3]))
  }

  @Test func aProcessInAClass() async {
    let model = ReadmeEditorViewModel()
    var history: [ProcessState<ReadmeEditorViewModel.Action>] = []
    let token = model.observe(\.action) { history.append($0) }
    model.save()
    await until(.changes(of: model, \.action)) { history.count == 2 }
    #expect(history == [.running(.save), .finished(.save)])
    token.cancel()
  }

  @Test func loadsNumbers() async {
    @Loadable var numbers: LoadableState<[Int]>
    var history: [LoadableState<[Int]>] = []
    let token = $numbers.observe { history.append($0) }

    await $numbers.load { [1, 2, 3] }

    #expect(history == [.loading, .loaded([1, 2, 3])])
    token.cancel()
  }

  @Test func aSlowLoadTimesOut() async throws {
    let clock = TestClock()
    @Loadable var numbers: LoadableState<[Int]>
    let recorder = StateRecorder($numbers)

    let load: Task<Void, Never> = $numbers.load(options: LoadOptions(timeout: .seconds(5), clock: clock)) {
      try await clock.sleep(for: .seconds(60))  // a server that does not answer
      return [1, 2, 3]
    }
    try await clock.waitForSleepers(2)  // the block and the timeout are waiting
    clock.advance(by: .seconds(5))
    await load.value

    #expect(recorder.values == [.loading, .error(TimeoutError())])
  }

  /// "Policies and activity", the README's test as written.
  @Test func typingSearchesOnce() async throws {
    let clock = TestClock()
    let model = ReadmeSearchViewModel(clock: clock) { query in [query.uppercased()] }
    let recorder = StateRecorder(model.$results)

    model.queryChanged(to: "sw")
    model.queryChanged(to: "swift")
    #expect(model.status == "waiting for you to stop typing")
    try await clock.waitForSleepers(1)  // the last call's debounce
    clock.advance(by: .milliseconds(300))
    try await recorder.wait(forHistory: [.loading, .loaded(["SWIFT"])])
    #expect(model.status == "idle")
  }

  /// "Policies and activity": the status follows the retries of a search that times out (the model's options use the
  /// injected clock for the timeout and the retry delay too); cancelling drops a waiting search.
  @Test func policiesAndActivity() async throws {
    let clock = TestClock()
    let model = ReadmeSearchViewModel(clock: clock) { query in
      try await clock.sleep(for: .seconds(60))  // a server that does not answer
      return [query]
    }
    let activity = StateRecorder(activityOf: model.$results)
    #expect(model.status == "idle")
    model.queryChanged(to: "swift")
    try await clock.waitForSleepers(1)  // the debounce
    clock.advance(by: .milliseconds(300))
    try await clock.waitForSleepers(2)  // the search and its timeout
    #expect(model.status == "searching")
    clock.advance(by: .seconds(10))
    try await activity.wait(forPhase: .retrying(attempt: 2))
    #expect(model.status == "retrying (attempt 2)")
    #expect(model.results == .loading)
    model.$results.cancel()
    #expect(model.status == "idle")
    #expect(model.results == .loading)  // cancel() keeps the state
    #expect(clock.sleeperCount == 0)
  }

  /// The cheat sheet: both declarations take the injected clock.
  @Test func cheatSheetInjectsTheClockIntoDeclaredOptions() async throws {
    let clock = TestClock()
    let model = ReadmeCheatSheetFeedModel(clock: clock)
    let load: Task<Void, Never> = model.$feed.load {
      try await clock.sleep(for: .seconds(60))  // a server that does not answer
      return ["first post"]
    }
    try await clock.waitForSleepers(2)  // on the injected clock: the block and the timeout
    clock.advance(by: .seconds(10))
    let activity = StateRecorder(activityOf: model.$feed)
    try await activity.wait(forPhase: .retrying(attempt: 2))
    model.$feed.cancel()
    await load.value

    let first: Task<Void, Never> = model.$saving.run { try await clock.sleep(for: .seconds(1)) }
    let second: Task<Void, Never> = model.$saving.run { Issue.record("a joining call never runs its block") }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    await first.value
    await second.value
    #expect(model.saving.hasFinished)
  }

  /// "Loads owned by an actor": the README's lines, with `print` replaced by what it would print.
  @Test func loadsOwnedByAnActor() async {
    let store = ReadmeConfigStore()
    #expect(await store.value(for: "mode") == nil)
    await store.refresh()
    #expect(await store.value(for: "mode") ?? "not loaded" == "fast")
    await store.refresh()  // a refresh of a loaded value: no `.loading`, the value stays readable
    #expect(await store.config == .loaded(["mode": "fast"]))
    #expect(await store.fetchCount == 2)
  }

  /// "Sharing a value between screens": the second screen shows the fresh value without a request; invalidating the
  /// prefix makes every bound screen fetch again.
  @Test func sharingAValueBetweenScreens() async {
    let clock = TestClock()
    let cache = LoadCache(staleTime: .seconds(30), clock: clock)
    let feed = ReadmeFeedViewModel(cache: cache)
    let sidebar = ReadmeFeedViewModel(cache: cache)
    await feed.appear(author: "ada")  // fetches
    await sidebar.appear(author: "ada")  // fresh for 30 s: shown at once, no request
    #expect(feed.requests == 1 && sidebar.requests == 0)
    #expect(sidebar.posts == .loaded(["ada's first post"]))
    cache.invalidate(prefix: "posts")  // after posting: every screen showing posts fetches again
    await until(.changes(of: sidebar.$posts)) { feed.requests + sidebar.requests == 2 }
    #expect(feed.posts == .loaded(["ada's first post"]) && sidebar.posts == feed.posts)
  }
}

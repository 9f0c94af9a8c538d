import ProcessedTesting
import Testing

@testable import Processed

// The examples of LoadsOwnedByAnActor.md (Processed.docc), as the article shows them. Keep both in step.

/// LoadsOwnedByAnActor.md
enum ActorArticle {
  struct Config: Equatable, Sendable {
    var version: Int
    var maxUploadBytes: Int
  }

  actor ConfigStore {
    @IsolatedLoadable var config: LoadableState<Config> = .absent
    private(set) var fetches = 0
    private(set) var retries: [Int] = []
    private var retryWatch: ObservationToken?
    private let options: LoadOptions
    private let fetch: @Sendable () async throws -> Config

    init(clock: any Clock<Duration> = ContinuousClock(), fetch: @escaping @Sendable () async throws -> Config) {
      options = LoadOptions(retry: .constant(.seconds(2), maxRetries: 1), timeout: .seconds(5), clock: clock)
      self.fetch = fetch
    }

    /// At startup, then every minute: fetches the configuration again. The one in use stays in use meanwhile, and
    /// also when every attempt fails.
    func refresh() async {
      await $config.refresh(options: options) {
        self.fetches += 1  // the actor's own state: no `await`
        return try await self.fetch()
      }
    }

    /// Counts the retries, on the actor.
    func watchRetries() {
      retryWatch = $config.observeActivity { activity in
        if case .retrying(let attempt) = activity.phase { self.retries.append(attempt) }
      }
    }

    /// What request handlers read: the last configuration that loaded, if any.
    func current() -> Config? {
      $config.lastValue
    }
  }

  struct UploadHandler: Sendable {
    let store: ConfigStore

    func accepts(bytes: Int) async -> Bool {
      guard let config = await store.current() else { return false }  // not loaded yet
      return bytes <= config.maxUploadBytes
    }
  }

  /// A configuration service that answers at once or, while it is down, never.
  actor FakeConfigService {
    let clock: TestClock
    var isDown = false

    init(clock: TestClock) { self.clock = clock }

    func setDown(_ down: Bool) { isDown = down }

    func fetch() async throws -> Config {
      if isDown { try await clock.sleep(for: .seconds(60)) }
      return Config(version: 1, maxUploadBytes: 10_000_000)
    }
  }
}

// Not in the article: what the tests below need to look inside the store.
extension ActorArticle.ConfigStore {
  /// Ends the retry watch (its observer holds the store: without this, the store and its observer keep each other).
  func stopWatching() { retryWatch = nil }

  func configStates() -> AsyncStream<LoadableState<ActorArticle.Config>> { $config.states }

  var lastError: (any Error)? { $config.activity.lastError }

  var ownerID: ObjectIdentifier? { _config.storage.ownerID }
}

@Suite struct ActorArticleTests {
  typealias Config = ActorArticle.Config
  typealias ConfigStore = ActorArticle.ConfigStore
  typealias UploadHandler = ActorArticle.UploadHandler
  typealias FakeConfigService = ActorArticle.FakeConfigService

  static let config = Config(version: 1, maxUploadBytes: 10_000_000)

  /// The article's test, as written (plus the end of the retry watch).
  @Test func aRefreshThatTimesOutKeepsTheConfiguration() async throws {
    let clock = TestClock()
    let service = FakeConfigService(clock: clock)
    let store = ConfigStore(clock: clock) { try await service.fetch() }
    let uploads = UploadHandler(store: store)
    #expect(await uploads.accepts(bytes: 1) == false)  // nothing loaded yet
    await store.refresh()
    #expect(await uploads.accepts(bytes: 5_000_000))

    await store.watchRetries()
    await service.setDown(true)
    let refresh = Task { await store.refresh() }
    try await clock.waitForSleepers(2)  // the fetch and its timeout
    #expect(await uploads.accepts(bytes: 5_000_000))  // served during the refresh
    clock.advance(by: .seconds(5))  // attempt 1 times out
    try await clock.waitForSleepers(1)  // the retry delay
    clock.advance(by: .seconds(2))
    try await clock.waitForSleepers(2)  // attempt 2 and its timeout
    clock.advance(by: .seconds(5))
    await refresh.value

    #expect(await store.config == .loaded(Config(version: 1, maxUploadBytes: 10_000_000)))
    #expect(await store.retries == [2])
    #expect(await store.fetches == 3)
    // The failed refresh's error is kept beside the configuration.
    #expect(await store.lastError is TimeoutError)
    #expect(clock.sleeperCount == 0)
    await store.stopWatching()
  }

  /// "`refresh()` writes `.loading` and then the configuration the first time; later … no `.loading`", and "when no
  /// load runs, releasing the actor ends `states`".
  @Test func aRefreshOfALoadedConfigurationWritesNoLoadingAndStatesEndWithTheStore() async {
    let clock = TestClock()
    let service = FakeConfigService(clock: clock)
    var store: ConfigStore? = ConfigStore(clock: clock) { try await service.fetch() }
    let states = await store!.configStates()
    await store!.refresh()
    await store!.refresh()
    #expect(await store!.fetches == 2)
    store = nil
    var seen: [LoadableState<Config>] = []
    for await state in states { seen.append(state) }
    #expect(seen == [.absent, .loading, .loaded(Self.config), .loaded(Self.config)])
  }

  /// The first call pins the state to the store: before it, no owner; after it, the store.
  @Test func theFirstCallPinsTheStateToTheStore() async {
    let store = ConfigStore { Self.config }
    #expect(await store.ownerID == nil)
    #expect(await store.current() == nil)  // a read does not pin
    await store.refresh()
    #expect(await store.ownerID == ObjectIdentifier(store))
  }

  /// "Cancelling the caller cancels the load and returns at once, without waiting for a block that ignores
  /// cancellation; that block's result is never written."
  @Test func aCancelledCallerReturnsWithoutWaitingForTheFetch() async {
    let clock = TestClock()
    let gate = ActorGate()  // a fetch that ignores cancellation
    let store = ConfigStore(clock: clock) {
      await gate.wait()
      return Self.config
    }
    let caller = Task { await store.refresh() }
    await gate.untilWaiting(1)
    caller.cancel()
    await caller.value  // returns although the fetch still waits at the gate
    #expect(gate.waiting == 1)
    #expect(await store.config == .loading)  // cancelling keeps the state
    #expect(await store.fetches == 1)
    gate.open()
    // A new refresh loads; the stale fetch, cancelled, can no longer write.
    await store.refresh()
    #expect(await store.config == .loaded(Self.config))
    #expect(await store.fetches == 2)
  }

  /// A retry that succeeds: the retry watch, on the actor, sees the one retry, and the error goes away.
  @Test func aServerThatComesBackIsRetried() async throws {
    let clock = TestClock()
    let service = FakeConfigService(clock: clock)
    let store = ConfigStore(clock: clock) { try await service.fetch() }
    await store.watchRetries()
    await service.setDown(true)
    let refresh = Task { await store.refresh() }
    try await clock.waitForSleepers(2)
    clock.advance(by: .seconds(5))
    try await clock.waitForSleepers(1)  // the retry delay
    await service.setDown(false)
    clock.advance(by: .seconds(2))
    await refresh.value
    #expect(await store.config == .loaded(Self.config))
    #expect(await store.retries == [2])
    #expect(await store.lastError == nil)
    await store.stopWatching()
  }
}

/// "A block that refers to nothing of the actor runs on it too": its progress reports count, with or without `self`.
@Suite struct ActorArticleBlockIsolationTests {
  actor ProgressProbe {
    @IsolatedLoadable var value: LoadableState<Int> = .absent
    var messages: [String] = []
    var watch: ObservationToken?

    func watchProgress() {
      watch = $value.observeActivity { activity in
        if let message = activity.progress?.message { self.messages.append(message) }
      }
    }

    func loadUsingSelf() async {
      await $value.load {
        _ = self
        LoadProgress.report(fraction: 0.5, message: "with self")
        return 1
      }
    }

    func loadWithoutSelf() async {
      await $value.load {
        LoadProgress.report(fraction: 0.5, message: "without self")
        return 2
      }
    }

    func stopWatching() { watch = nil }
  }

  @Test func aBlockThatUsesSelfReportsItsProgress() async {
    let probe = ProgressProbe()
    await probe.watchProgress()
    await probe.loadUsingSelf()
    #expect(await probe.messages == ["with self"])
    await probe.stopWatching()
  }

  @Test func aBlockThatDoesNotUseSelfRunsOnTheActorToo() async {
    let probe = ProgressProbe()
    await probe.watchProgress()
    await probe.loadWithoutSelf()
    #expect(await probe.value == .loaded(2))
    #expect(await probe.messages == ["without self"])
    await probe.stopWatching()
  }
}

/// LoadsOwnedByAnActor.md, "The cache, pages and calm presentation".
enum ActorArticleCache {
  actor FeedService {
    @IsolatedLoadable var feed: LoadableState<[String]> = .absent
    let cache: LoadCache

    init(cache: LoadCache) { self.cache = cache }

    func show() async {
      // Shares the entry with any screen that shows the same key: one fetch, one answer for both.
      await $feed.load(CacheKey<[String]>("feed"), in: cache) { try await Self.fetch() }
    }

    static func fetch() async throws -> [String] { ["first post"] }

    var shown: LoadableState<[String]> { feed }
  }
}

@Suite struct ActorArticleCacheTests {
  @Test func theServiceAndAScreenShareTheEntry() async {
    let cache = LoadCache(staleTime: .seconds(60))
    let service = ActorArticleCache.FeedService(cache: cache)
    await service.show()
    #expect(await service.shown == .loaded(["first post"]))
    let (shown, fetched) = await MainActor.run {
      let screen = Loadable<[String]>()
      var fetched = false
      screen.projectedValue.load(CacheKey<[String]>("feed"), in: cache) {
        fetched = true
        return []
      }
      return (screen.wrappedValue, fetched)
    }
    #expect(!fetched)  // a fresh hit, written inside the call: the screen shows the service's answer
    #expect(shown == .loaded(["first post"]))
  }
}

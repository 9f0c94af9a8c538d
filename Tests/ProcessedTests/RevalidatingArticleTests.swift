import ProcessedTesting
import Testing

@testable import Processed

extension CacheKey where Value == Int {
  fileprivate static var counter: Self { CacheKey("counter") }
  fileprivate static func likes(_ post: Int) -> Self { CacheKey("likes", post) }
}

/// The "Revalidating on Focus, Reconnect and an Interval" article's examples, as it shows them.
@MainActor
@Suite struct RevalidatingArticleTests {
  @MainActor
  final class CounterScreen {
    @Loadable var number: LoadableState<Int>
  }

  @MainActor
  final class CountingServer {
    private(set) var requests = 0
    func count() async -> Int {
      requests += 1
      return requests
    }
  }

  let clock = TestClock()
  let screen = CounterScreen()
  let server = CountingServer()

  /// "Never a burst": ten returns in a row refetch once.
  @Test func tenReturnsRefetchOnce() async throws {
    let cache = LoadCache(revalidationThrottle: .seconds(5), clock: clock)
    await screen.$number.load(.counter, in: cache) { await server.count() }
    let history = StateRecorder(screen.$number)
    for _ in 0..<10 {
      cache.setFocused(false)
      cache.setFocused(true)  // one refetch for all ten
    }
    try await history.wait(forCount: 1)
    #expect(server.requests == 2)
    #expect(history.values == [.loaded(2)])
  }

  /// "Polling" and "In tests": the poll timer is the cache's own; advancing past it polls.
  @Test func aPollRunsAtTheInterval() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let options = LoadOptions(refetchInterval: .seconds(10), clock: clock)
    await screen.$number.load(.counter, in: cache, options: options) { await server.count() }
    let history = StateRecorder(screen.$number)
    try await clock.waitForCacheTimers(1)  // the poll timer sleeps
    clock.advance(by: .seconds(10))  // the poll fetches
    try await history.wait(forCount: 1)
    #expect(screen.number == .loaded(2))
  }

  /// "Offline: paused, not spinning": the fetch waits for the network, its state says `.paused`.
  @Test func anOfflineLoadIsPaused() async throws {
    let cache = LoadCache(clock: clock)
    cache.setOnline(false)
    let task: Task<Void, Never> = screen.$number.load(.counter, in: cache) { await server.count() }
    #expect(screen.number == .loading && screen.$number.activity.phase == .paused)
    #expect(server.requests == 0)
    cache.setOnline(true)  // the fetch starts now
    try await task.value(timeLimit: .seconds(30))
    #expect(screen.number == .loaded(1))
  }

  /// The offline like: shown at once, sent when the network is back.
  @Test func anOfflineMutationWaits() async throws {
    @MainActor final class API {
      var likes: [Int] = []
      func like(_ post: Int) async throws { likes.append(post) }
    }
    let api = API()
    let post = 7
    let cache = LoadCache(clock: clock)
    cache.set(3, for: .likes(post))
    cache.setOnline(false)
    let like = Task { try await cache.mutate(.likes(post), optimistic: { $0 += 1 }) { try await api.like(post) } }
    for _ in 0..<1_000 where cache.value(for: .likes(post)) != 4 { await Task.yield() }
    #expect(cache.value(for: .likes(post)) == 4)  // the new count shows
    #expect(api.likes.isEmpty)  // api.like has not been called
    cache.setOnline(true)  // api.like runs now
    try await like.value(timeLimit: .seconds(30))
    #expect(api.likes == [7])
  }
}

import ProcessedTesting
import Testing

@testable import Processed

extension CacheKey where Value == Int {
  fileprivate static var counter: Self { CacheKey("counter") }
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
}

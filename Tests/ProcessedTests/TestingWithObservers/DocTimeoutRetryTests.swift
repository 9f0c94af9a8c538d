// A suite of the TestingWithObservers.md article, compiled and run as DocExamplesTests.swift describes. Its types and
// test are the article's, word for word.
import Processed
import ProcessedTesting
import Testing

extension DocExamples.TestingWithObserversDocs {
  // doc: TestingWithObservers.md "Test timeout and retry"
  /// A server for tests: it answers after a second on the test clock, except the requests it drops, which never answer.
  @MainActor
  final class FakeServer {
    let clock: TestClock
    var dropped = 0  // how many of the next requests never answer

    init(clock: TestClock) {
      self.clock = clock
    }

    func feed() async throws -> [String] {
      if dropped > 0 {
        dropped -= 1
        try await clock.sleep(for: .seconds(3600))  // a server that does not answer
      }
      try await clock.sleep(for: .seconds(1))
      return ["first post"]
    }
  }

  @MainActor
  final class FeedViewModel {
    @Loadable var feed: LoadableState<[String]>
    private let server: FakeServer

    init(server: FakeServer, clock: any Clock<Duration> = ContinuousClock()) {
      let retry = RetryPolicy.exponential(maxRetries: 2, initialDelay: .seconds(1), jitter: .none)
      _feed = Loadable(options: LoadOptions(retry: retry, timeout: .seconds(5), clock: clock))
      self.server = server
    }

    @discardableResult
    func appear() -> Task<Void, Never> {
      $feed.load { [server] in try await server.feed() }
    }
  }

  @Suite struct DocTimeoutRetryTests {
    @MainActor
    @Test func aFeedThatTimesOutIsRetried() async throws {
      let clock = TestClock()
      let server = FakeServer(clock: clock)
      server.dropped = 1
      let model = FeedViewModel(server: server, clock: clock)
      let recorder = StateRecorder(model.$feed)
      let activity = StateRecorder(activityOf: model.$feed)

      model.appear()
      try await clock.waitForSleepers(2)  // the request and the timeout
      clock.advance(by: .seconds(5))  // the attempt times out; its request is cancelled
      try await activity.wait(forPhase: .retrying(attempt: 2))
      try await clock.waitForSleepers(1)  // the retry delay
      clock.advance(by: .seconds(1))
      try await clock.waitForSleepers(2)  // the second request and its timeout
      clock.advance(by: .seconds(1))  // the server answers

      try await recorder.wait(forHistory: [.loading, .loaded(["first post"])])
      try await activity.wait(forPhases: [.running(attempt: 1), .retrying(attempt: 2), .running(attempt: 2), .idle])
    }
  }
}

// Issue #30's scenario, as a new user writes it from the README and the DocC articles: a search that debounces, a feed
// with retry, timeout and refresh, and a Save that a double tap must not submit twice — each view model taking its
// clock in `init`, the fake server sleeping on the `TestClock` as the docs suggest, and the tests waiting on
// recorders and the clock only.
import Foundation  // as most app files do: hence `@Processed.Process` below
import Processed
import ProcessedTesting
import Testing

/// The fake server, as the testing article suggests: every answer takes `latency` on the test clock, and a request the
/// script drops never answers (its block sleeps on the clock until the load's timeout cancels it).
@MainActor
final class NewcomerServer {
  enum Reply { case answer, drop, fail }
  struct Unavailable: Error, Equatable {}

  let clock: TestClock
  let latency = Duration.seconds(1)
  /// The replies to the next requests, in order; once it runs out, every request is answered.
  var script: [Reply] = []
  private(set) var requests: [String] = []
  private var feedVersion = 0

  init(clock: TestClock) {
    self.clock = clock
  }

  func search(_ query: String) async throws -> [String] {
    try await respond(to: "search \(query)")
    return ["\(query) 1", "\(query) 2"]
  }

  func feed() async throws -> [String] {
    try await respond(to: "feed")
    feedVersion += 1
    return ["post \(feedVersion)"]
  }

  func save(_ draft: String) async throws {
    try await respond(to: "save \(draft)")
  }

  private func respond(to request: String) async throws {
    requests.append(request)
    switch script.isEmpty ? .answer : script.removeFirst() {
    case .answer:
      try await clock.sleep(for: latency)
    case .fail:
      try await clock.sleep(for: latency)
      throw Unavailable()
    case .drop:
      try await clock.sleep(for: .seconds(3600))  // a server that does not answer
    }
  }
}

@MainActor
final class NewcomerSearchViewModel {
  @Loadable var results: LoadableState<[String]>
  private let server: NewcomerServer

  init(server: NewcomerServer, clock: any Clock<Duration> = ContinuousClock()) {
    _results = Loadable(options: LoadOptions(debounce: .trailing(.milliseconds(300)), clock: clock))
    self.server = server
  }

  func queryChanged(to query: String) {
    $results.load { [server] in try await server.search(query) }
  }
}

@MainActor
final class NewcomerFeedViewModel {
  @Loadable var feed: LoadableState<[String]>
  private let server: NewcomerServer

  init(server: NewcomerServer, clock: any Clock<Duration> = ContinuousClock()) {
    let retry = RetryPolicy.exponential(maxRetries: 2, initialDelay: .seconds(1), jitter: .none)  // 1 s, then 2 s
    _feed = Loadable(options: LoadOptions(retry: retry, timeout: .seconds(5), clock: clock))
    self.server = server
  }

  @discardableResult
  func appear() -> Task<Void, Never> {
    $feed.load { [server] in try await server.feed() }
  }

  @discardableResult
  func pullToRefresh() -> Task<Void, Never> {
    $feed.refresh { [server] in try await server.feed() }
  }
}

@MainActor
final class NewcomerEditorViewModel {
  @Processed.Process(options: LoadOptions(overlap: .joinRunning)) var saving
  private let server: NewcomerServer

  init(server: NewcomerServer) {
    self.server = server
  }

  @discardableResult
  func saveTapped() -> Task<Void, Never> {
    $saving.run { [server] in try await server.save("draft") }
  }
}

@MainActor
@Suite struct NewcomerScenarioTests {
  @Test func typingSearchesOnceAfterAPause() async throws {
    let clock = TestClock()
    let server = NewcomerServer(clock: clock)
    let model = NewcomerSearchViewModel(server: server, clock: clock)
    let states = StateRecorder(model.$results)
    let activity = StateRecorder(activityOf: model.$results)

    for query in ["s", "sw", "swi"] { model.queryChanged(to: query) }
    try await activity.wait(forPhase: .debouncing)
    try await clock.waitForSleepers(1)  // the last call's debounce: the others were replaced
    #expect(states.values.isEmpty)  // no .loading while typing
    clock.advance(by: .milliseconds(300))
    try await states.wait(for: .loading)
    try await clock.waitForSleepers(1)  // the server's answer
    clock.advance(by: .seconds(1))
    try await states.wait(forHistory: [.loading, .loaded(["swi 1", "swi 2"])])
    try await activity.wait(forPhases: [.debouncing, .running(attempt: 1), .idle])
    #expect(server.requests == ["search swi"])
  }

  @Test func theFeedRetriesATimeoutThenRefreshesWithoutASpinner() async throws {
    let clock = TestClock()
    let server = NewcomerServer(clock: clock)
    let model = NewcomerFeedViewModel(server: server, clock: clock)
    let states = StateRecorder(model.$feed)
    let activity = StateRecorder(activityOf: model.$feed)

    // The first request is never answered: it times out after 5 s and is retried after 1 s.
    server.script = [.drop]
    let appear = model.appear()
    try await clock.waitForSleepers(2)  // the server and the timeout
    clock.advance(by: .seconds(5))  // times out: the block is cancelled within the advance
    try await clock.waitForSleepers(1)  // so this is the retry delay
    #expect(model.$feed.activity.phase == .retrying(attempt: 2))
    #expect(model.$feed.activity.lastError as? TimeoutError == TimeoutError())
    clock.advance(by: .seconds(1))
    try await clock.waitForSleepers(2)  // the second attempt: the server and its timeout
    clock.advance(by: .seconds(1))
    try await states.wait(forHistory: [.loading, .loaded(["post 1"])])
    try await activity.wait(forPhases: [.running(attempt: 1), .retrying(attempt: 2), .running(attempt: 2), .idle])
    await appear.value
    #expect(clock.sleeperCount == 0)

    // A refresh whose three attempts fail keeps the feed on screen and says why.
    server.script = [.fail, .fail, .fail]
    let refreshActivity = StateRecorder(activityOf: model.$feed)
    let refresh = model.pullToRefresh()
    for (attempt, delay) in [(2, Duration.seconds(1)), (3, .seconds(2))] {
      try await clock.waitForSleepers(2)  // the server and the timeout
      clock.advance(by: .seconds(1))  // the server fails
      // A woken task runs after `advance` returns: wait for the phase first, then the retry delay is the sleeper.
      try await refreshActivity.wait(forPhase: .retrying(attempt: attempt))
      try await clock.waitForSleepers(1)
      clock.advance(by: delay)
    }
    try await clock.waitForSleepers(2)
    clock.advance(by: .seconds(1))
    try await refreshActivity.wait(forPhase: .idle)
    await refresh.value
    #expect(states.values == [.loading, .loaded(["post 1"])])  // no .loading, no .error
    #expect(model.$feed.activity.lastError as? NewcomerServer.Unavailable == NewcomerServer.Unavailable())

    // The next refresh succeeds: the new feed replaces the old one, still without a spinner.
    let again = model.pullToRefresh()
    try await clock.waitForSleepers(2)
    clock.advance(by: .seconds(1))
    try await states.wait(forHistory: [.loading, .loaded(["post 1"]), .loaded(["post 2"])])
    await again.value
    #expect(model.$feed.activity.lastError == nil)
    #expect(server.requests == Array(repeating: "feed", count: 6))
  }

  @Test func aDoubleTappedSaveSavesOnce() async throws {
    let clock = TestClock()
    let server = NewcomerServer(clock: clock)
    let editor = NewcomerEditorViewModel(server: server)
    let states = StateRecorder(editor.$saving)

    let first = editor.saveTapped()
    let second = editor.saveTapped()  // joins the save in progress
    try await clock.waitForSleepers(1)  // the one request
    clock.advance(by: .seconds(1))
    try await states.wait(forCount: 2)
    await first.value
    await second.value

    #expect(server.requests == ["save draft"])
    guard case .running(let process) = states.values.first else {
      Issue.record("no run recorded: \(states.values)")
      return
    }
    #expect(states.values == [.running(process), .finished(process)])
    #expect(editor.saving.hasFinished)
  }
}

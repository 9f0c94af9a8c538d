import ProcessedTesting
import Testing

@testable import Processed

// The example of CalmPresentation.md (Processed.docc), as the article shows it. Keep both in step.

/// CalmPresentation.md
enum CalmPresentationArticle {
  @MainActor
  final class InboxModel {
    @Loadable var messages: LoadableState<[String]>
    private let fetch: @Sendable () async throws -> [String]

    init(
      clock: any Clock<Duration> = ContinuousClock(),
      fetch: @escaping @Sendable () async throws -> [String]
    ) {
      let options = LoadOptions(
        loadingDelay: .milliseconds(300), minimumLoadingTime: .milliseconds(500),
        cancellation: .restorePreviousState, clock: clock)
      _messages = Loadable(options: options)
      self.fetch = fetch
    }

    func reload() {
      $messages.load { [fetch] in try await fetch() }
    }

    func stop() {
      $messages.cancel()
    }
  }
}

@MainActor
@Suite struct CalmPresentationArticleTests {
  typealias InboxModel = CalmPresentationArticle.InboxModel

  @Test func aQuickAnswerShowsNoSpinner() async throws {
    let clock = TestClock()
    let model = InboxModel(clock: clock) {
      try await clock.sleep(for: .milliseconds(200))
      return ["Hi"]
    }
    let recorder = StateRecorder(model.$messages)
    model.reload()
    try await clock.waitForSleepers(2)  // the fetch and the loading delay
    clock.advance(by: .milliseconds(200))
    try await recorder.wait(forCount: 1)
    #expect(recorder.values == [.loaded(["Hi"])])
  }

  @Test func aSlowAnswerKeepsTheSpinnerLongEnough() async throws {
    let clock = TestClock()
    let model = InboxModel(clock: clock) {
      try await clock.sleep(for: .milliseconds(400))
      return ["Hi"]
    }
    let recorder = StateRecorder(model.$messages)
    model.reload()
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(300))
    try await recorder.wait(forCount: 1)  // .loading at 300 ms
    clock.advance(by: .milliseconds(100))  // the answer, at 400 ms, is held
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(400))
    try await recorder.wait(forCount: 2)
    #expect(recorder.values == [.loading, .loaded(["Hi"])])
  }

  @Test func stopPutsBackWhatWasThereBeforeTheSpinner() async throws {
    let clock = TestClock()
    let model = InboxModel(clock: clock) {
      try await clock.sleep(for: .seconds(10))
      return ["new"]
    }
    model.messages = .loaded(["old"])
    let recorder = StateRecorder(model.$messages)
    model.reload()
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(300))
    try await recorder.wait(forCount: 1)
    model.stop()
    #expect(recorder.values == [.loading, .loaded(["old"])])
    #expect(clock.sleeperCount == 0)
  }
}

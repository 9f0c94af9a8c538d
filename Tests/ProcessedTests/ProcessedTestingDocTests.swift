import ProcessedTesting
import Testing

@testable import Processed

/// The worked test of the ProcessedTesting documentation (ProcessedTesting.docc/ProcessedTesting.md), and the examples
/// of `StateRecorder`'s doc comments that record from an observer of the test's own.
@MainActor
@Suite struct ProcessedTestingDocTests {
  /// The same view model as the TestingWithObservers article's.
  typealias SearchViewModel = DocExamples.TestingWithObserversDocs.SearchViewModel

  @Test func aSlowSearchTimesOut() async throws {
    let clock = TestClock()
    let model = SearchViewModel(clock: clock)
    let recorder = StateRecorder(model, \.results)

    let search = model.search("swift")
    try await clock.waitForSleepers(2)  // the block and the timeout are waiting
    clock.advance(by: .seconds(4))
    #expect(recorder.values == [.loading])
    clock.advance(by: .seconds(1))
    try await recorder.wait(forCount: 2)
    await search.value

    #expect(recorder.values == [.loading, .error(TimeoutError())])
  }

  @Test func aRecorderWaitThatIsNeverMetFails() async {
    @Loadable var numbers: LoadableState<Int>
    let recorder = StateRecorder($numbers)
    await #expect(throws: StateRecorder<LoadableState<Int>>.TimeLimitExceeded.self) {
      try await recorder.wait(forCount: 1, timeLimit: .milliseconds(20))
    }
    recorder.cancel()
    $numbers.reset()
    numbers = .loaded(1)
    #expect(recorder.values.isEmpty)
  }

  /// A model whose `refresh()` loads its `@Loadable var feed` and returns the load, for the recorder's examples.
  @MainActor
  final class FeedModel {
    @Loadable var feed: LoadableState<[String]>

    @discardableResult
    func refresh() -> Task<Void, Never> {
      $feed.load { ["first"] }
    }
  }

  @Test func anEmptyRecorderRecordsWhatItsObserverGivesIt() async throws {
    let model = FeedModel()
    // doc: StateRecorder.swift init() and record(_:)
    let activity = StateRecorder<LoadActivity>()
    activity.token = model.$feed.observeActivity { [weak activity] in activity?.record($0) }
    model.refresh()
    try await activity.wait(forCount: 2)
    #expect(activity.values.map(\.phase) == [.running(attempt: 1), .idle])
  }

  @Test func aRecorderWhoseTokenIsSetToNilRecordsNothingMore() async {
    let model = FeedModel()
    // doc: StateRecorder.swift token
    let recorder = StateRecorder<LoadableState<[String]>>()
    recorder.token = model.$feed.observe { [weak recorder] in recorder?.record($0) }
    await model.refresh().value
    recorder.token = nil  // records nothing more

    await model.refresh().value
    #expect(model.feed == .loaded(["first"]))
    #expect(recorder.values == [.loading, .loaded(["first"])])
  }

  /// A feed whose first request fails and is retried after 2 s on the test clock, for the activity examples.
  @MainActor
  final class RetryingFeedModel {
    @Loadable var feed: LoadableState<[String]>
    private var requests = 0

    init(clock: TestClock) {
      _feed = Loadable(options: LoadOptions(retry: .constant(.seconds(2), maxRetries: 1), clock: clock))
    }

    @discardableResult
    func refresh() -> Task<Void, Never> {
      $feed.load {
        self.requests += 1
        if self.requests == 1 { throw CancellationLikeFailure() }
        return ["first post"]
      }
    }
  }

  @Test func theActivityRecorderExamples() async throws {
    let clock = TestClock()
    let model = RetryingFeedModel(clock: clock)
    // doc: StateRecorder+Activity.swift (the extension's example)
    let activity = StateRecorder(activityOf: model.$feed)
    model.refresh()
    try await activity.wait(forPhase: .retrying(attempt: 2))  // the first attempt failed
    clock.advance(by: .seconds(2))
    // doc: StateRecorder+Activity.swift phases
    try await activity.wait(forPhase: .idle)
    #expect(activity.phases == [.running(attempt: 1), .retrying(attempt: 2), .running(attempt: 2), .idle])
    #expect(model.feed == .loaded(["first post"]))

    // doc: StateRecorder+Activity.swift init(activityOf:) for a process
    @Process var save
    let saving = StateRecorder(activityOf: $save)
    await $save.run {}
    try await saving.wait(forPhases: [.running(attempt: 1), .idle])
  }

  @Test func theStateWaitExamples() async throws {
    let clock = TestClock()
    let model = SearchViewModel(clock: clock)
    let recorder = StateRecorder(model, \.results)
    // doc: StateRecorder.swift wait(for:timeLimit:)
    model.search("swift")
    try await recorder.wait(for: .loading)
    try await clock.waitForSleepers(2)
    clock.advance(by: .seconds(5))
    try await recorder.wait(forHistory: [.loading, .error(TimeoutError())])

    let feed = RetryingFeedModel(clock: clock)
    let feedStates = StateRecorder(feed.$feed)
    // doc: StateRecorder.swift wait(forHistory:timeLimit:)
    feed.refresh()
    try await clock.waitForSleepers(1)  // the retry delay
    clock.advance(by: .seconds(2))
    try await feedStates.wait(forHistory: [.loading, .loaded(["first post"])])
  }

  @Test func theTestClockTimeoutAndRetryExample() async throws {
    let clock = TestClock()
    @Loadable var feed: LoadableState<[String]>
    let recorder = StateRecorder($feed)
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 1), timeout: .seconds(5), clock: clock)
    let task: Task<Void, Never> = $feed.load(options: options) {
      try await clock.sleep(for: .seconds(60))  // a server that does not answer
      return ["first post"]
    }
    // doc: TestClock.swift waitForSleepers(_:timeLimit:)
    try await clock.waitForSleepers(2)  // the block and the timeout
    clock.advance(by: .seconds(5))  // the attempt times out; its block is cancelled
    try await clock.waitForSleepers(1)  // the retry delay
    #expect($feed.activity.phase == .retrying(attempt: 2))
    $feed.cancel()
    await task.value
    #expect(recorder.values == [.loading])
  }
}

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
}

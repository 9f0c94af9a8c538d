import ProcessedTesting
import Testing

@testable import Processed

/// The worked test of the ProcessedTesting documentation (ProcessedTesting.docc/ProcessedTesting.md).
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
}

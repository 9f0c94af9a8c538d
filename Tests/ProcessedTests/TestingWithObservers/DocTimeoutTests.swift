// A suite of the TestingWithObservers.md article, compiled and run as DocExamplesTests.swift describes; the
// stubs it assumes (`NetworkError`, …) are the `DocExamples.TestingWithObserversDocs` of that file.
import Processed
import ProcessedTesting
import Testing

extension DocExamples.TestingWithObserversDocs {
  // doc: TestingWithObservers.md "Control time with TestClock"
  @MainActor
  final class SearchViewModel: ObservableModel, LoadableSupport {
    let observers = ObserverRegistry()
    var results: LoadableState<[String]> = .absent
    let clock: any Clock<Duration>

    init(clock: any Clock<Duration> = ContinuousClock()) {
      self.clock = clock
    }

    @discardableResult
    func search(_ text: String) -> Task<Void, Never> {
      load(\.results, options: LoadOptions(timeout: .seconds(5), clock: clock)) {
        try await clock.sleep(for: .seconds(60))  // a server that does not answer
        return [text]
      }
    }
  }

  @Suite struct DocTimeoutTests {
    @MainActor
    @Test func aSlowSearchTimesOut() async throws {
      let clock = TestClock()
      let model = SearchViewModel(clock: clock)
      let recorder = StateRecorder(model, \.results)

      let search = model.search("swift")
      try await clock.waitForSleepers(2)  // the block and the timeout are waiting
      clock.advance(by: .seconds(5))
      await search.value

      #expect(recorder.values == [.loading, .error(TimeoutError())])
    }
  }
}

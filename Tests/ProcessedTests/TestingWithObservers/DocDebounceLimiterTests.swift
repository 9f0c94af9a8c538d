// A suite of the TestingWithObservers.md article, compiled and run as DocExamplesTests.swift describes. Its types and
// test are the article's, word for word.
import Processed
import ProcessedTesting
import Testing

extension DocExamples.TestingWithObserversDocs {
  // doc: TestingWithObservers.md "Test debounce and a limiter"
  @MainActor
  final class SearchModel {
    @Loadable var results: LoadableState<[String]>

    init(limiter: LoadLimiter, clock: any Clock<Duration> = ContinuousClock()) {
      _results = Loadable(
        options: LoadOptions(debounce: .trailing(.milliseconds(300)), limiter: limiter, clock: clock))
    }

    func queryChanged(to query: String) {
      $results.load { [query.uppercased()] }
    }
  }

  @Suite struct DocDebounceLimiterTests {
    @MainActor
    @Test func aDebouncedSearchQueuesForAPermit() async throws {
      let clock = TestClock()
      let limiter = LoadLimiter(maxConcurrent: 1)
      let model = SearchModel(limiter: limiter, clock: clock)
      let activity = StateRecorder(activityOf: model.$results)
      @Loadable var upload: LoadableState<Int>  // another load, holding the one permit for 10 s
      let uploading: Task<Void, Never> = $upload.load(options: LoadOptions(limiter: limiter, clock: clock)) {
        try await clock.sleep(for: .seconds(10))
        return 1
      }

      model.queryChanged(to: "swift")
      try await activity.wait(forPhase: .debouncing)
      try await clock.waitForSleepers(2)  // the upload and the debounce
      clock.advance(by: .milliseconds(300))
      try await activity.wait(forPhase: .waiting)  // for the upload's permit
      #expect(model.results == .loading)
      clock.advance(by: .seconds(10))  // the upload ends and gives the permit back

      try await activity.wait(forPhases: [.debouncing, .waiting, .running(attempt: 1), .idle])
      #expect(model.results == .loaded(["SWIFT"]))
      await uploading.value
    }
  }
}

// A suite of the TestingWithObservers.md article, compiled and run as DocExamplesTests.swift describes; the
// stubs it assumes (`NetworkError`, …) are the `DocExamples.TestingWithObserversDocs` of that file.
import Processed
import ProcessedTesting
import Testing

extension DocExamples.TestingWithObserversDocs {
  @MainActor
  @Suite struct NumbersTests {
    @Test func loadShowsLoadingThenNumbers() async {
      @Loadable var numbers: LoadableState<[Int]>
      var history: [LoadableState<[Int]>] = []
      let token = $numbers.observe { history.append($0) }

      await $numbers.load { [1, 2, 3] }
      await $numbers.load { throw NetworkError() }

      #expect(history == [.loading, .loaded([1, 2, 3]), .loading, .error(NetworkError())])
      token.cancel()
    }
  }
}

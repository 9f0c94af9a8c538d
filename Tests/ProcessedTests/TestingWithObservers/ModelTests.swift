// A suite of the TestingWithObservers.md article, compiled and run as DocExamplesTests.swift describes; the
// stubs it assumes (`NetworkError`, …) are the `DocExamples.TestingWithObserversDocs` of that file.
import Processed
import ProcessedTesting
import Testing

extension DocExamples.TestingWithObserversDocs {
  @Suite struct ModelTests {
    // doc: TestingWithObservers.md:163
    @MainActor
    final class NumbersViewModel: ObservableModel, LoadableSupport {
      let observers = ObserverRegistry()
      var numbers: LoadableState<[Int]> = .absent

      @discardableResult
      func refresh() -> Task<Void, Never> {
        load(\.numbers) { try await fetchNumbers() }
      }

      func fetchNumbers() async throws -> [Int] { [1, 2, 3] }
    }

    // doc corrected (the source now shows this form): TestingWithObservers.md:163 — written as a free, non-isolated function, the test cannot
    // create the main-actor model or `StateRecorder`; it needs `@MainActor`.
    @MainActor
    @Test func refreshLoadsNumbers() async {
      let model = NumbersViewModel()
      let recorder = StateRecorder(model, \.numbers)

      await model.refresh().value

      #expect(recorder.values == [.loading, .loaded([1, 2, 3])])
    }
  }
}

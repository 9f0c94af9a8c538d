// A suite of the TestingWithObservers.md article, compiled and run as DocExamplesTests.swift describes; the
// stubs it assumes (`NetworkError`, …) are the `DocExamples.TestingWithObserversDocs` of that file.
import Processed
import ProcessedTesting
import Testing

extension DocExamples.TestingWithObserversDocs {
  /// Not main-actor isolated, so that the tests below compile only because of their own `@MainActor`.
  @Suite struct RecorderTests {
    // doc: TestingWithObservers.md "Record with StateRecorder"
    @MainActor
    @Test func deleteFails() async {
      enum Action: Equatable, Sendable { case save, delete }
      @Process var action: ProcessState<Action>
      let recorder = StateRecorder($action)

      await $action.run(.delete) { throw NetworkError() }

      #expect(recorder.values == [.running(.delete), .failed(process: .delete, error: NetworkError())])
    }
  }
}

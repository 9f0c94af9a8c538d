import ProcessedTesting
import Testing

@testable import Processed

// MARK: - Members of self without `self.`

@MainActor
@Suite struct ProcessSupportImplicitSelfTests {
  @Test func runAs() async throws {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    model.save()
    #expect(model.action == .running(.save))
    try await history.wait(forCount: 2)
    #expect(history.values == [.running(.save), .finished(.save)])
    #expect(model.saved == [.save])
  }

  @Test func asyncRunAs() async {
    let model = KeyPathVM()
    await model.deleteAndWait()
    #expect(model.action == .finished(.delete))
    #expect(model.saved == [.delete])
  }

  @Test func singleProcess() async throws {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.upload)
    model.startUpload()
    try await history.wait(forCount: 2)
    #expect(model.upload.hasFinished)
    await model.uploadAndWait()
    #expect(model.uploads == 2)
    #expect(history.values.count == 4)
  }

  @Test func interruptForms() async throws {
    let model = KeyPathVM()
    await model.saveWatchingDelays()
    #expect(model.action == .finished(.save))
    let history = StateRecorder(model, \.upload)
    model.uploadWatchingDelays()
    try await history.wait(forCount: 2)
    #expect(model.upload.hasFinished)
    #expect(model.saved == [.save])
    #expect(model.uploads == 1)
  }
}

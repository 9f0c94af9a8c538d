import ProcessedTesting
import Testing

@testable import Processed

// MARK: - Members of self without `self.`

@MainActor
@Suite struct ProcessSupportImplicitSelfTests {
  @Test func runAs() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
    model.save()
    #expect(model.action == .running(.save))
    await history.wait(forCount: 2)
    #expect(history.values == [.running(.save), .finished(.save)])
    #expect(model.saved == [.save])
  }

  @Test func asyncRunAs() async {
    let model = KeyPathVM()
    await model.deleteAndWait()
    #expect(model.action == .finished(.delete))
    #expect(model.saved == [.delete])
  }

  @Test func singleProcess() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.upload)
    model.startUpload()
    await history.wait(forCount: 2)
    #expect(model.upload.hasFinished)
    await model.uploadAndWait()
    #expect(model.uploads == 2)
    #expect(history.values.count == 4)
  }

  @Test func interruptForms() async {
    let model = KeyPathVM()
    await model.saveWatchingDelays()
    #expect(model.action == .finished(.save))
    let history = keyPathRecorder(model, \.upload)
    model.uploadWatchingDelays()
    await history.wait(forCount: 2)
    #expect(model.upload.hasFinished)
    #expect(model.saved == [.save])
    #expect(model.uploads == 1)
  }
}

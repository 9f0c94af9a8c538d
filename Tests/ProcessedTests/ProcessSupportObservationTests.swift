import ProcessedTesting
import Testing

@testable import Processed

private typealias Action = KeyPathVM.Action

// MARK: - Observation

@MainActor
func runProcessScenario<Model: ProcessSupport>(
  _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, ProcessState<KeyPathVM.Action>>
) async {
  await model.run(keyPath, as: .save) {}
  await model.run(keyPath, as: .delete) { throw KeyPathTestError.boom }
  let gate = Gate()
  let cancelled: Task<Void, Never> = model.run(keyPath, as: .save) { await gate.wait() }
  await gate.untilWaiting(1)
  model.cancel(keyPath)
  gate.open()
  await cancelled.value
  model.reset(keyPath)
  model.reset(keyPath)
  await model.run(keyPath, as: .delete) { throw ResetProcess() }
  await model.run(keyPath, as: .save, interrupts: [.zero]) {
    await untilCancelled()
  } onInterrupt: { _ in
    throw TimeoutError()
  }
}

let processScenarioHistory: [ProcessState<KeyPathVM.Action>] = [
  .running(.save), .finished(.save),
  .running(.delete), .failed(process: .delete, error: KeyPathTestError.boom),
  .running(.save),
  .idle,
  .running(.delete), .idle,
  .running(.save), .failed(process: .save, error: TimeoutError()),
]

@MainActor
@Suite struct ProcessSupportObservationTests {
  @Test func plainPropertyOfAnObservableModel() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    await runProcessScenario(model, \.action)
    #expect(history.values == processScenarioHistory)
  }

  @Test func propertyWhoseDidSetNotifiesIsStillNotifiedOnce() async {
    let model = KeyPathDidSetModel()
    let history = StateRecorder(model, \.action)
    model.action = .finished(.delete)
    #expect(history.values == [.finished(.delete)])
    await runProcessScenario(model, \.action)
    #expect(history.values == [.finished(.delete)] + processScenarioHistory)
    #expect(model.actionLog == history.values)
  }

  @Test func observedPropertyIsNotifiedOnce() async {
    let model = KeyPathObservedModel()
    let history = StateRecorder(model, \.action)
    model.action = .finished(.delete)
    #expect(history.values == [.finished(.delete)])
    await runProcessScenario(model, \.action)
    #expect(history.values == [.finished(.delete)] + processScenarioHistory)
  }

  @Test func processWrapperPropertyIsNotifiedOnce() async {
    let model = KeyPathWrappedModel()
    let history = StateRecorder(model, \.action)
    await runProcessScenario(model, \.action)
    #expect(history.values == processScenarioHistory)
  }

  @Test func classThatIsNotAnObservableModelSeesEveryWriteInDidSet() async {
    let model = KeyPathPlainModel()
    await runProcessScenario(model, \.action)
    #expect(model.actionLog == processScenarioHistory)
  }
}

import ProcessedTesting
import Testing

@testable import Processed

// MARK: - B8 async forms

@MainActor
@Suite struct ProcessSupportAsyncFormTests {
  private func startWaitingRun(_ model: KeyPathVM, cancelled: KeyPathBox<Bool?>) async -> Task<Void, Never> {
    let started = KeyPathBox(false)
    let caller = Task {
      await model.run(\.action, as: .save) {
        started.value = true
        await untilCancelled()
        cancelled.value = Task.isCancelled
      }
    }
    await until(.changes(of: started)) { started.value }
    return caller
  }

  @Test func stoppedByCancel() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingRun(model, cancelled: cancelled)
    model.cancel(\.action)
    await caller.value
    #expect(cancelled.value == true)
    #expect(history.values == [.running(.save)])
  }

  @Test func stoppedByReset() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingRun(model, cancelled: cancelled)
    model.reset(\.action)
    await caller.value
    #expect(cancelled.value == true)
    #expect(history.values == [.running(.save), .idle])
  }

  @Test func stoppedByANewerRun() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingRun(model, cancelled: cancelled)
    let newer: Task<Void, Never> = model.run(\.action, as: .delete) {}
    await caller.value
    await newer.value
    #expect(cancelled.value == true)
    #expect(history.values == [.running(.save), .running(.delete), .finished(.delete)])
  }

  @Test func stoppedByCancellingTheCaller() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingRun(model, cancelled: cancelled)
    caller.cancel()
    await caller.value
    #expect(cancelled.value == true)
    #expect(history.values == [.running(.save)])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func blockInheritsTheCallersTaskLocalValues() async {
    let model = KeyPathVM()
    let seen = KeyPathBox(0)
    await KeyPathTaskLocal.$marker.withValue(7) {
      await model.run(\.action, as: .save) { seen.value = KeyPathTaskLocal.marker }
    }
    #expect(seen.value == 7)
    #expect(model.action == .finished(.save))
  }

  @Test func taskFormRunsAtTheGivenPriority() async {
    let model = KeyPathVM()
    let seen = KeyPathBox<TaskPriority?>(nil)
    let task: Task<Void, Never> = model.run(\.upload, priority: .low) { seen.value = Task.basePriority }
    await until(.changes(of: seen)) { seen.value != nil }
    #expect(seen.value == .low)
    _ = task
  }

  @Test func singleProcessAsyncFormStoppedByCancellingTheCaller() async {
    let model = KeyPathVM()
    let started = KeyPathBox(false)
    let caller = Task {
      await model.run(\.upload) {
        started.value = true
        await untilCancelled()
      }
    }
    await until(.changes(of: started)) { started.value }
    caller.cancel()
    await caller.value
    #expect(model.upload.isRunning)
    #expect(keyPathHostCount(of: model) == 0)
  }
}

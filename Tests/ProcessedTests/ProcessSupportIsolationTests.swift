import ProcessedTesting
import Testing

@testable import Processed

// MARK: - B7 isolation

@MainActor
@Suite struct ProcessSupportIsolationTests {
  @Test func twoInstancesRunningTheSameKeyPathDoNotTouchEachOther() async {
    let first = KeyPathVM()
    let second = KeyPathVM()
    let gate = Gate()
    let cancelled = KeyPathBox<[Bool]>([])
    let firstTask: Task<Void, Never> = first.run(\.action, as: .save) {
      await gate.wait()
      cancelled.value.append(Task.isCancelled)
    }
    let secondTask: Task<Void, Never> = second.run(\.action, as: .save) {
      await gate.wait()
      cancelled.value.append(Task.isCancelled)
    }
    await gate.untilWaiting(2)
    #expect(keyPathHostCount(of: first) == 1)
    #expect(keyPathHostCount(of: second) == 1)
    gate.open()
    await firstTask.value
    await secondTask.value
    #expect(cancelled.value == [false, false])
    #expect(first.action == .finished(.save))
    #expect(second.action == .finished(.save))
  }

  @Test func cancelOnOneInstanceLeavesTheOtherRunning() async {
    let first = KeyPathVM()
    let second = KeyPathVM()
    let gate = Gate()
    let firstTask: Task<Void, Never> = first.run(\.upload) { await gate.wait() }
    let secondTask: Task<Void, Never> = second.run(\.upload) { await gate.wait() }
    await gate.untilWaiting(2)
    first.cancel(\.upload)
    gate.open()
    await firstTask.value
    await secondTask.value
    #expect(first.upload.isRunning)
    #expect(second.upload.hasFinished)
  }

  @Test func twoProcessPropertiesOfOneInstanceRunAtOnce() async {
    let model = KeyPathVM()
    let actionGate = Gate()
    let uploadGate = Gate()
    let action: Task<Void, Never> = model.run(\.action, as: .save) { await actionGate.wait() }
    let upload: Task<Void, Never> = model.run(\.upload) {
      await uploadGate.wait()
      throw KeyPathTestError.boom
    }
    await actionGate.untilWaiting(1)
    await uploadGate.untilWaiting(1)
    #expect(keyPathHostCount(of: model) == 2)
    model.reset(\.action)
    #expect(keyPathHostIsRunning(model, \KeyPathVM.upload))
    actionGate.open()
    uploadGate.open()
    await action.value
    await upload.value
    #expect(model.action == .idle)
    #expect(model.upload.hasFailed)
  }

  @Test func loadsAndRunsOfOneInstanceDoNotTouchEachOther() async {
    let model = KeyPathVM()
    let gate = Gate()
    let load: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      return [1]
    }
    let run: Task<Void, Never> = model.run(\.action, as: .save) { await gate.wait() }
    await gate.untilWaiting(2)
    model.cancel(\.action)
    gate.open()
    await load.value
    await run.value
    #expect(model.numbers == .loaded([1]))
    #expect(model.action == .running(.save))
  }
}

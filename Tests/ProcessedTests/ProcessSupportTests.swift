import ProcessedTesting
import Testing

@testable import Processed

private typealias Action = KeyPathVM.Action

// MARK: - B1–B5 on key paths

@MainActor
@Suite struct ProcessSupportTests {
  // B1

  @Test func runWritesRunningSynchronouslyThenFinished() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    let task: Task<Void, Never> = model.run(\.action, as: .save) {}
    #expect(model.action == .running(.save))
    #expect(history.values == [.running(.save)])
    await task.value
    #expect(history.values == [.running(.save), .finished(.save)])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func silentRunSkipsRunning() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    await model.run(\.action, as: .delete, silently: true) {}
    #expect(history.values == [.finished(.delete)])
  }

  @Test func runningIsNotWrittenAgainForTheSameProcess() async {
    let model = KeyPathVM()
    model.action = .running(.save)
    let history = StateRecorder(model, \.action)
    await model.run(\.action, as: .save) {}
    #expect(history.values == [.finished(.save)])
  }

  @Test func runningIsWrittenForAnotherProcess() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    let gate = Gate()
    let save: Task<Void, Never> = model.run(\.action, as: .save) { await gate.wait() }
    await gate.untilWaiting(1)
    let delete: Task<Void, Never> = model.run(\.action, as: .delete) {}
    await delete.value
    gate.open()
    await save.value
    #expect(history.values == [.running(.save), .running(.delete), .finished(.delete)])
  }

  @Test func singleProcessRunsAreDistinct() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.upload)
    let gate = Gate()
    let first: Task<Void, Never> = model.run(\.upload) { await gate.wait() }
    await gate.untilWaiting(1)
    await model.run(\.upload) {}
    gate.open()
    await first.value
    #expect(history.values.count == 3)
    guard history.values.count == 3,
      case .running(let firstProcess) = history.values[0],
      case .running(let secondProcess) = history.values[1]
    else { return }
    #expect(firstProcess != secondProcess)
    #expect(history.values[2] == .finished(secondProcess))
  }

  @Test func singleProcessFailureNamesItsProcess() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.upload)
    await model.run(\.upload) { throw KeyPathTestError.boom }
    guard history.values.count == 2, case .running(let process) = history.values[0] else {
      Issue.record("unexpected history \(history.values)")
      return
    }
    #expect(history.values[1] == .failed(process: process, error: KeyPathTestError.boom))
  }

  // B2

  @Test func thrownErrorFailsTheProcess() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    await model.run(\.action, as: .delete) { throw KeyPathTestError.boom }
    #expect(history.values == [.running(.delete), .failed(process: .delete, error: KeyPathTestError.boom)])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func thrownCancellationErrorLeavesTheState() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    await model.run(\.action, as: .save) { throw CancellationError() }
    #expect(history.values == [.running(.save)])
  }

  // B4

  @Test func cancelKeepsTheStateAndDropsTheOutcome() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    let gate = Gate()
    let task: Task<Void, Never> = model.run(\.action, as: .save) { await gate.wait() }
    await gate.untilWaiting(1)
    model.cancel(\.action)
    #expect(keyPathHostCount(of: model) == 0)
    gate.open()
    await task.value
    #expect(history.values == [.running(.save)])
  }

  @Test func cancellingTheReturnedTaskDropsTheOutcome() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    let gate = Gate()
    let task: Task<Void, Never> = model.run(\.action, as: .save) {
      await gate.wait()
      throw KeyPathTestError.boom
    }
    await gate.untilWaiting(1)
    task.cancel()
    gate.open()
    await task.value
    #expect(history.values == [.running(.save)])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func resetCancelsAndWritesIdle() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    let gate = Gate()
    let task: Task<Void, Never> = model.run(\.action, as: .save) { await gate.wait() }
    await gate.untilWaiting(1)
    model.reset(\.action)
    #expect(model.action == .idle)
    gate.open()
    await task.value
    #expect(history.values == [.running(.save), .idle])
  }

  @Test func resetWithoutARunWritesIdleOnce() {
    let model = KeyPathVM()
    model.action = .finished(.save)
    let history = StateRecorder(model, \.action)
    model.reset(\.action)
    model.reset(\.action)
    model.cancel(\.action)
    #expect(history.values == [.idle])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func resetOfAnIdleStateWritesNothing() {
    let model = KeyPathPlainModel()
    model.reset(\.action)
    #expect(model.actionLog.isEmpty)
  }

  // B5

  @Test(arguments: KeyPathControl.allCases)
  func controlErrorFromTheBlock(_ control: KeyPathControl) async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    await model.run(\.action, as: .save) { throw control.error }
    let expected: [ProcessState<Action>] = control.resets ? [.running(.save), .idle] : [.running(.save)]
    #expect(history.values == expected)
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test(arguments: KeyPathControl.allCases)
  func controlErrorFromOnInterrupt(_ control: KeyPathControl) async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
    let gate = Gate()
    let task: Task<Void, Never> = model.run(\.action, as: .delete, interrupts: [.zero]) {
      await gate.wait()
    } onInterrupt: { _ in
      throw control.error
    }
    // The run ends (it leaves the host table) as its activity returns to idle; a cancel writes nothing.
    await until(.activity(of: model.processes.action)) { keyPathHostCount(of: model) == 0 }
    let expected: [ProcessState<Action>] = control.resets ? [.running(.delete), .idle] : [.running(.delete)]
    #expect(model.action == expected.last)
    gate.open()
    await task.value
    #expect(history.values == expected)
  }

  @Test(arguments: KeyPathControl.allCases)
  func controlErrorFromASingleProcess(_ control: KeyPathControl) async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.upload)
    await model.run(\.upload) { throw control.error }
    #expect(history.values.count == (control.resets ? 2 : 1))
    #expect(model.upload.isIdle == control.resets)
  }
}

import ProcessedTesting
import Testing

@testable import Processed

/// The process kinds of an editor.
private enum EditorAction: Equatable, Sendable {
  case save, delete
}

/// A class that holds `@Process` properties.
@MainActor
private final class EditorHolder {
  @Process var action: ProcessState<EditorAction>
  @Process var upload
}

/// A struct that holds `@Process` properties.
@MainActor
private struct EditorScreen {
  @Process var action: ProcessState<EditorAction>
}

/// An ``ObservableModel`` whose `@Process` property reaches `observe(\.action)`.
@MainActor
private final class ObservedEditorModel: ObservableModel {
  let observers = ObserverRegistry()
  @Process var action: ProcessState<EditorAction>
}

/// `@Process`: the wrapper, its controller and B1–B5 for processes.
@MainActor
@Suite struct ProcessWrapperTests {
  // MARK: Declaring

  @Test func processWithoutTypeInfersSingleProcessAndStartsIdle() {
    @Process var save
    let state: SingleProcessState = save
    #expect(state == .idle)
    let standalone = Process()
    let standaloneState: ProcessState<SingleProcess> = standalone.wrappedValue
    #expect(standaloneState == .idle)
  }

  @Test func processWithExplicitSingleProcessTypeStartsIdle() async {
    @Process var upload: SingleProcessState
    #expect(upload == .idle)
    let sent = await Task.detached { Process<EditorAction>() }.value
    #expect(sent.wrappedValue == .idle)
  }

  @Test func initialValueIsHonoured() {
    @Process var save: SingleProcessState = .finished(SingleProcess(id: "a"))
    #expect(save == .finished(SingleProcess(id: "a")))
    let standalone = Process<EditorAction>(wrappedValue: .running(.delete))
    #expect(standalone.wrappedValue == .running(.delete))
  }

  @Test func singleProcessRunFormRunsAFreshProcess() async {
    @Process var save
    let recorder = StateRecorder($save)
    await $save.run {}
    let task: Task<Void, Never> = $save.run {}
    await task.value
    #expect(recorder.values.count == 4)
    guard recorder.values.count == 4 else { return }
    let first = recorder.values[0].process
    let second = recorder.values[2].process
    #expect(first != nil && second != nil)
    #expect(first != second)
    #expect(recorder.values[0] == .running(first!))
    #expect(recorder.values[1] == .finished(first!))
    #expect(recorder.values[2] == .running(second!))
    #expect(recorder.values[3] == .finished(second!))
  }

  @Test func classPropertiesRun() async {
    let holder = EditorHolder()
    #expect(holder.action == .idle)
    #expect(holder.upload == .idle)
    let recorder = StateRecorder(holder.$action)
    let task: Task<Void, Never> = holder.$action.run(.save) {}
    await task.value
    #expect(recorder.values == [.running(.save), .finished(.save)])
    await holder.$upload.run {}
    #expect(holder.upload.hasFinished)
  }

  @Test func structPropertyRunsAndCopiesShareState() async {
    let screen = EditorScreen()
    let copy = screen
    let recorder = StateRecorder(screen.$action)
    await copy.$action.run(.delete) {}
    #expect(recorder.values == [.running(.delete), .finished(.delete)])
    #expect(screen.action == .finished(.delete))
  }

  @Test func settingWrappedValueCancelsTheRunningProcessFirst() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    let gate = Gate()
    let task: Task<Void, Never> = $action.run(.save) {
      await gate.wait()
    }
    action = .idle
    gate.open()
    await task.value
    #expect(recorder.values == [.running(.save), .idle])
  }

  // MARK: B1 start

  @Test func runningIsWrittenSynchronously() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    let gate = Gate()
    let task: Task<Void, Never> = $action.run(.save) {
      await gate.wait()
    }
    #expect(recorder.values == [.running(.save)])
    gate.open()
    await task.value
    #expect(recorder.values == [.running(.save), .finished(.save)])
  }

  @Test func silentRunDoesNotWriteRunning() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    await $action.run(.save, silently: true) {}
    #expect(recorder.values == [.finished(.save)])
  }

  @Test func runningIsNotRewrittenForTheSameKind() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    let gate = Gate()
    let first: Task<Void, Never> = $action.run(.save) {
      await gate.wait()
      throw WrapperError(code: 1)
    }
    let second: Task<Void, Never> = $action.run(.save) {}
    await second.value
    gate.open()
    await first.value
    #expect(recorder.values == [.running(.save), .finished(.save)])
  }

  @Test func runningIsRewrittenForADifferentKind() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    let gate = Gate()
    let first: Task<Void, Never> = $action.run(.save) {
      await gate.wait()
    }
    let second: Task<Void, Never> = $action.run(.delete) {}
    await second.value
    gate.open()
    await first.value
    #expect(recorder.values == [.running(.save), .running(.delete), .finished(.delete)])
  }

  @Test func singleProcessRunsAreDistinctKinds() async {
    @Process var save
    let recorder = StateRecorder($save)
    let gate = Gate()
    let first: Task<Void, Never> = $save.run { await gate.wait() }
    let second: Task<Void, Never> = $save.run {}
    await second.value
    gate.open()
    await first.value
    #expect(recorder.values.count == 3)
    #expect(recorder.values.map(\.isRunning) == [true, true, false])
  }

  @Test func asyncFormReturnsWhenTheRunEnded() async {
    @Process var action: ProcessState<EditorAction>
    await $action.run(.save) {
      await Task.yield()  // the run suspends before it ends
    }
    #expect(action == .finished(.save))
    #expect($action.storage.tracker.isRunning == false)
  }

  // MARK: B2 result

  @Test func thrownErrorFailsTheProcess() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    await $action.run(.delete) { throw WrapperError(code: 4) }
    #expect(recorder.values == [.running(.delete), .failed(process: .delete, error: WrapperError(code: 4))])
    #expect(action != .failed(process: .delete, error: WrapperError(code: 5)))
    #expect(action != .failed(process: .save, error: WrapperError(code: 4)))
  }

  // MARK: B4 cancellation and reset

  @Test func cancelLeavesTheStateAsItIs() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    let gate = Gate()
    let task: Task<Void, Never> = $action.run(.save) {
      await gate.wait()
      throw WrapperError(code: 1)
    }
    $action.cancel()
    gate.open()
    await task.value
    #expect(recorder.values == [.running(.save)])
  }

  @Test func cancellingTheReturnedTaskStopsFurtherWrites() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    let gate = Gate()
    let task: Task<Void, Never> = $action.run(.save) {
      await gate.wait()
    }
    task.cancel()
    gate.open()
    await task.value
    #expect(recorder.values == [.running(.save)])
  }

  @Test func blockThrowingCancellationErrorLeavesTheState() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    await $action.run(.save) { throw CancellationError() }
    #expect(recorder.values == [.running(.save)])
    #expect($action.storage.tracker.isRunning == false)
  }

  @Test func resetCancelsAndWritesIdleOnce() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    $action.reset()
    #expect(recorder.values.isEmpty)
    let gate = Gate()
    let task: Task<Void, Never> = $action.run(.save) {
      await gate.wait()
    }
    $action.reset()
    $action.reset()
    gate.open()
    await task.value
    #expect(recorder.values == [.running(.save), .idle])
  }

  // MARK: B5 control errors

  @Test func cancelProcessFromTheBlockActsAsCancel() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    await $action.run(.save) { throw CancelProcess() }
    #expect(recorder.values == [.running(.save)])
    #expect($action.storage.tracker.isRunning == false)
  }

  @Test func resetProcessFromTheBlockActsAsReset() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    await $action.run(.save) { throw ResetProcess() }
    #expect(recorder.values == [.running(.save), .idle])
  }

  @Test func loadableControlErrorsWorkInProcessesToo() async {
    @Process var action: ProcessState<EditorAction>
    let recorder = StateRecorder($action)
    await $action.run(.save) { throw CancelLoadable() }
    #expect(recorder.values == [.running(.save)])
    await $action.run(.delete) { throw ResetLoadable() }
    #expect(recorder.values == [.running(.save), .running(.delete), .idle])
  }

  // MARK: ObservableModel

  @Test func modelObserverSeesEveryChangeOfAWrapperPropertyOnce() async {
    let model = ObservedEditorModel()
    let history = StateRecorder<ProcessState<EditorAction>>()
    let token = model.observe(\.action) { history.record($0) }
    await model.$action.run(.save) {}
    await model.$action.run(.delete) { throw WrapperError(code: 1) }
    model.$action.reset()
    #expect(
      history.values == [
        .running(.save), .finished(.save), .running(.delete), .failed(process: .delete, error: WrapperError(code: 1)),
        .idle,
      ])
    token.cancel()
  }
}

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
    let history = keyPathRecorder(model, \.action)
    let task: Task<Void, Never> = model.run(\.action, as: .save) {}
    #expect(model.action == .running(.save))
    #expect(history.values == [.running(.save)])
    await task.value
    #expect(history.values == [.running(.save), .finished(.save)])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func silentRunSkipsRunning() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
    await model.run(\.action, as: .delete, silently: true) {}
    #expect(history.values == [.finished(.delete)])
  }

  @Test func runningIsNotWrittenAgainForTheSameProcess() async {
    let model = KeyPathVM()
    model.action = .running(.save)
    let history = keyPathRecorder(model, \.action)
    await model.run(\.action, as: .save) {}
    #expect(history.values == [.finished(.save)])
  }

  @Test func runningIsWrittenForAnotherProcess() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
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
    let history = keyPathRecorder(model, \.upload)
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
    let history = keyPathRecorder(model, \.upload)
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
    let history = keyPathRecorder(model, \.action)
    await model.run(\.action, as: .delete) { throw KeyPathTestError.boom }
    #expect(history.values == [.running(.delete), .failed(process: .delete, error: KeyPathTestError.boom)])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func thrownCancellationErrorLeavesTheState() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
    await model.run(\.action, as: .save) { throw CancellationError() }
    #expect(history.values == [.running(.save)])
  }

  // B4

  @Test func cancelKeepsTheStateAndDropsTheOutcome() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
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
    let history = keyPathRecorder(model, \.action)
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
    let history = keyPathRecorder(model, \.action)
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
    let history = keyPathRecorder(model, \.action)
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
    let history = keyPathRecorder(model, \.action)
    await model.run(\.action, as: .save) { throw control.error }
    let expected: [ProcessState<Action>] = control.resets ? [.running(.save), .idle] : [.running(.save)]
    #expect(history.values == expected)
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test(arguments: KeyPathControl.allCases)
  func controlErrorFromOnInterrupt(_ control: KeyPathControl) async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
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
    let history = keyPathRecorder(model, \.upload)
    await model.run(\.upload) { throw control.error }
    #expect(history.values.count == (control.resets ? 2 : 1))
    #expect(model.upload.isIdle == control.resets)
  }
}

// MARK: - B6 latest wins, with blocks that ignore cancellation

@MainActor
@Suite struct ProcessSupportLatestWinsTests {
  @Test func staleFinishIsDropped() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
    let staleGate = Gate()
    let currentGate = Gate()
    let stale: Task<Void, Never> = model.run(\.action, as: .save) { await staleGate.wait() }
    await staleGate.untilWaiting(1)
    let current: Task<Void, Never> = model.run(\.action, as: .save) { await currentGate.wait() }
    staleGate.open()
    await stale.value
    #expect(history.values == [.running(.save)])
    currentGate.open()
    await current.value
    #expect(history.values == [.running(.save), .finished(.save)])
  }

  @Test func staleFailureIsDropped() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
    let gate = Gate()
    let stale: Task<Void, Never> = model.run(\.action, as: .save) {
      await gate.wait()
      throw KeyPathTestError.late
    }
    await gate.untilWaiting(1)
    await model.run(\.action, as: .delete) {}
    gate.open()
    await stale.value
    #expect(history.values == [.running(.save), .running(.delete), .finished(.delete)])
  }

  @Test(arguments: KeyPathControl.allCases)
  func staleControlErrorIsDropped(_ control: KeyPathControl) async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
    let staleGate = Gate()
    let currentGate = Gate()
    let stale: Task<Void, Never> = model.run(\.action, as: .save) {
      await staleGate.wait()
      throw control.error
    }
    await staleGate.untilWaiting(1)
    let current: Task<Void, Never> = model.run(\.action, as: .delete) { await currentGate.wait() }
    staleGate.open()
    await stale.value
    #expect(model.action == .running(.delete))
    #expect(keyPathHostIsRunning(model, \KeyPathVM.action))
    currentGate.open()
    await current.value
    #expect(history.values == [.running(.save), .running(.delete), .finished(.delete)])
  }

  @Test func staleResetAfterTheNewerRunFinishedIsDropped() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
    let gate = Gate()
    let stale: Task<Void, Never> = model.run(\.action, as: .save) {
      await gate.wait()
      throw ResetProcess()
    }
    await gate.untilWaiting(1)
    await model.run(\.action, as: .save) {}
    gate.open()
    await stale.value
    #expect(history.values == [.running(.save), .finished(.save)])
  }

  @Test func staleInterruptOutcomeIsDropped() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
    let fired = KeyPathBox(0)
    let gate = Gate()
    let clock = TestClock()
    let stale: Task<Void, Never> = model.run(
      \.action, as: .save, options: LoadOptions(clock: clock), interrupts: [.zero, .milliseconds(10)]
    ) {
      await gate.wait()
    } onInterrupt: { _ in
      fired.value += 1
      throw TimeoutError()
    }
    model.cancel(\.action)
    gate.open()
    await stale.value
    // The stale run's 10 ms interrupt was cancelled with it: moving time past it wakes nobody.
    #expect(clock.sleeperCount == 0)
    clock.advance(by: .seconds(1))
    #expect(fired.value == 0)
    #expect(history.values == [.running(.save)])
  }

  @Test func interruptThatStartsANewerRunThenThrowsLeavesTheNewerRunAlone() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
    let staleGate = Gate()
    let newerGate = Gate()
    let newerWasCancelled = KeyPathBox<Bool?>(nil)
    let newer = KeyPathBox<Task<Void, Never>?>(nil)
    let stale: Task<Void, Never> = model.run(\.action, as: .save, interrupts: [.zero]) {
      await staleGate.wait()
    } onInterrupt: { _ in
      newer.value = model.run(\.action, as: .delete) {
        await newerGate.wait()
        newerWasCancelled.value = Task.isCancelled
      }
      throw TimeoutError()
    }
    await until(.changes(of: newer)) { newer.value != nil }
    newerGate.open()
    await newer.value?.value
    staleGate.open()
    await stale.value
    #expect(newerWasCancelled.value == false)
    #expect(history.values == [.running(.save), .running(.delete), .finished(.delete)])
  }

  @Test func cancelReachesTheCurrentRunAfterAStaleOneFinished() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
    let staleGate = Gate()
    let currentGate = Gate()
    let stale: Task<Void, Never> = model.run(\.action, as: .save) { await staleGate.wait() }
    await staleGate.untilWaiting(1)
    let current: Task<Void, Never> = model.run(\.action, as: .delete) { await currentGate.wait() }
    staleGate.open()
    await stale.value
    model.cancel(\.action)
    #expect(keyPathHostCount(of: model) == 0)
    currentGate.open()
    await current.value
    #expect(history.values == [.running(.save), .running(.delete)])
  }
}

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
    let history = keyPathRecorder(model, \.action)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingRun(model, cancelled: cancelled)
    model.cancel(\.action)
    await caller.value
    #expect(cancelled.value == true)
    #expect(history.values == [.running(.save)])
  }

  @Test func stoppedByReset() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingRun(model, cancelled: cancelled)
    model.reset(\.action)
    await caller.value
    #expect(cancelled.value == true)
    #expect(history.values == [.running(.save), .idle])
  }

  @Test func stoppedByANewerRun() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.action)
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
    let history = keyPathRecorder(model, \.action)
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

// MARK: - B9 interrupts

/// Time goes through a `TestClock` given in the options; the test moves it while the load runs in a task.
@MainActor
@Suite struct ProcessSupportInterruptTests {
  @Test func delaysAccumulate() async throws {
    let model = KeyPathVM()
    let clock = TestClock()
    let delays = KeyPathBox<[Duration]>([])
    let gate = Gate()
    let run = Task {
      await model.run(
        \.action, as: .save, options: LoadOptions(clock: clock), interrupts: [.milliseconds(10), .milliseconds(20)]
      ) {
        await gate.wait()
      } onInterrupt: { delay in
        delays.value.append(delay)
        if delays.value.count == 2 { gate.open() }
      }
    }
    for step in [10, 20] {
      try await clock.waitForSleepers(1)
      clock.advance(by: .milliseconds(step))
    }
    await run.value
    #expect(delays.value == [.milliseconds(10), .milliseconds(30)])
    #expect(model.action == .finished(.save))
  }

  @Test func timeoutErrorFailsTheProcess() async throws {
    let model = KeyPathVM()
    let clock = TestClock()
    let history = keyPathRecorder(model, \.action)
    let run = Task {
      await model.run(\.action, as: .save, options: LoadOptions(clock: clock), interrupts: [.milliseconds(5)]) {
        try? await clock.sleep(for: .seconds(10))
      } onInterrupt: { _ in
        throw TimeoutError()
      }
    }
    try await clock.waitForSleepers(2)  // the block and the interrupt
    clock.advance(by: .milliseconds(5))
    await run.value
    #expect(history.values == [.running(.save), .failed(process: .save, error: TimeoutError())])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func singleProcessTimeout() async throws {
    let model = KeyPathVM()
    let clock = TestClock()
    let task: Task<Void, Never> = model.run(
      \.upload, options: LoadOptions(clock: clock), interrupts: [.milliseconds(5)]
    ) {
      try? await clock.sleep(for: .seconds(10))
    } onInterrupt: { _ in
      throw TimeoutError()
    }
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(5))
    await task.value
    #expect(model.upload.hasFailed)
    #expect(model.upload.error is TimeoutError)
  }

  @Test func singleProcessAsyncTimeout() async throws {
    let model = KeyPathVM()
    let clock = TestClock()
    let run = Task {
      await model.run(\.upload, options: LoadOptions(clock: clock), interrupts: [.milliseconds(5)]) {
        try? await clock.sleep(for: .seconds(10))
      } onInterrupt: { _ in
        throw TimeoutError()
      }
    }
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(5))
    await run.value
    #expect(model.upload.error is TimeoutError)
  }

  @Test func zeroAndNegativeDelaysFireImmediatelyAndAddNothing() async throws {
    let model = KeyPathVM()
    let clock = TestClock()
    let delays = KeyPathBox<[Duration]>([])
    let gate = Gate()
    let task: Task<Void, Never> = model.run(
      \.action, as: .delete, options: LoadOptions(clock: clock),
      interrupts: [.milliseconds(-1), .milliseconds(5), .zero]
    ) {
      await gate.wait()
    } onInterrupt: { delay in
      delays.value.append(delay)
      if delays.value.count == 3 { gate.open() }
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(5))
    await task.value
    #expect(delays.value == [.zero, .milliseconds(5), .milliseconds(5)])
    #expect(model.action == .finished(.delete))
  }

  @Test func interruptsStopWhenTheBlockFinishes() async {
    let model = KeyPathVM()
    let clock = TestClock()
    let fired = KeyPathBox(0)
    await model.run(\.action, as: .save, options: LoadOptions(clock: clock), interrupts: [.milliseconds(20)]) {
    } onInterrupt: { _ in
      fired.value += 1
    }
    #expect(clock.sleeperCount == 0)  // the interrupt stopped with the block
    clock.advance(by: .seconds(1))
    #expect(fired.value == 0)
    #expect(model.action == .finished(.save))
  }
}

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
    let history = keyPathRecorder(model, \.action)
    await runProcessScenario(model, \.action)
    #expect(history.values == processScenarioHistory)
  }

  @Test func propertyWhoseDidSetNotifiesIsStillNotifiedOnce() async {
    let model = KeyPathDidSetModel()
    let history = keyPathRecorder(model, \.action)
    model.action = .finished(.delete)
    #expect(history.values == [.finished(.delete)])
    await runProcessScenario(model, \.action)
    #expect(history.values == [.finished(.delete)] + processScenarioHistory)
    #expect(model.actionLog == history.values)
  }

  @Test func observedPropertyIsNotifiedOnce() async {
    let model = KeyPathObservedModel()
    let history = keyPathRecorder(model, \.action)
    model.action = .finished(.delete)
    #expect(history.values == [.finished(.delete)])
    await runProcessScenario(model, \.action)
    #expect(history.values == [.finished(.delete)] + processScenarioHistory)
  }

  @Test func processWrapperPropertyIsNotifiedOnce() async {
    let model = KeyPathWrappedModel()
    let history = keyPathRecorder(model, \.action)
    await runProcessScenario(model, \.action)
    #expect(history.values == processScenarioHistory)
  }

  @Test func classThatIsNotAnObservableModelSeesEveryWriteInDidSet() async {
    let model = KeyPathPlainModel()
    await runProcessScenario(model, \.action)
    #expect(model.actionLog == processScenarioHistory)
  }
}

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

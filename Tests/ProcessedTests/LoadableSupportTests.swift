import ProcessedTesting
import Testing

@testable import Processed

/// The control errors, each with what it must do to a load (B5: all four act alike for loads and processes).
enum KeyPathControl: String, CaseIterable, Sendable {
  case cancelLoadable
  case resetLoadable
  case cancelProcess
  case resetProcess

  var error: any Error {
    switch self {
    case .cancelLoadable: CancelLoadable()
    case .resetLoadable: ResetLoadable()
    case .cancelProcess: CancelProcess()
    case .resetProcess: ResetProcess()
    }
  }

  var resets: Bool { self == .resetLoadable || self == .resetProcess }
}

/// What an `onInterrupt` handler throws in the stale-interrupt tests.
enum KeyPathInterruptThrow: String, Sendable {
  case timeout
  case cancel
  case reset

  var error: any Error {
    switch self {
    case .timeout: TimeoutError()
    case .cancel: CancelLoadable()
    case .reset: ResetLoadable()
    }
  }
}

// MARK: - B1–B5 on key paths

@MainActor
@Suite struct LoadableSupportTests {
  // B1

  @Test func startWritesLoadingSynchronouslyThenTheValue() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let task: Task<Void, Never> = model.load(\.numbers) { [1, 2] }
    #expect(model.numbers == .loading)
    #expect(history.values == [.loading])
    await task.value
    #expect(history.values == [.loading, .loaded([1, 2])])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func silentLoadSkipsLoading() async {
    let model = KeyPathVM()
    model.numbers = .loaded([0])
    let history = keyPathRecorder(model, \.numbers)
    await model.load(\.numbers, silently: true) { [1] }
    #expect(history.values == [.loaded([1])])
  }

  @Test func loadingIsNotWrittenAgainWhenAlreadyLoading() async {
    let model = KeyPathVM()
    model.numbers = .loading
    let history = keyPathRecorder(model, \.numbers)
    await model.load(\.numbers) { [1] }
    #expect(history.values == [.loaded([1])])
  }

  @Test func loadingIsWrittenFromEveryOtherState() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    await model.load(\.numbers) { [1] }
    await model.load(\.numbers) { throw KeyPathTestError.boom }
    await model.load(\.numbers) { [2] }
    #expect(
      history.values == [.loading, .loaded([1]), .loading, .error(KeyPathTestError.boom), .loading, .loaded([2])])
  }

  @Test func newerLoadCancelsTheRunningOneWithoutWritingLoadingTwice() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let gate = Gate()
    let wasCancelled = KeyPathBox(false)
    let first: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      wasCancelled.value = Task.isCancelled
      return [1]
    }
    await gate.untilWaiting(1)
    let second: Task<Void, Never> = model.load(\.numbers) { [2] }
    #expect(history.values == [.loading])
    await second.value
    gate.open()
    await first.value
    #expect(wasCancelled.value)
    #expect(history.values == [.loading, .loaded([2])])
  }

  @Test func taskFormRunsAtTheGivenPriority() async {
    let model = KeyPathVM()
    // Awaiting the task would escalate its priority; the test waits for the state's change instead.
    let task: Task<Void, Never> = model.load(\.other, priority: .low) { Int(Task.basePriority?.rawValue ?? 0) }
    await until(.changes(of: model, \.other)) { model.other.isLoaded }
    #expect(model.other == .loaded(Int(TaskPriority.low.rawValue)))
    _ = task
  }

  // B2

  @Test func thrownErrorIsWritten() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    await model.load(\.numbers) { throw KeyPathTestError.boom }
    #expect(history.values == [.loading, .error(KeyPathTestError.boom)])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func thrownCancellationErrorLeavesTheState() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    await model.load(\.numbers) { throw CancellationError() }
    #expect(history.values == [.loading])
    #expect(keyPathHostCount(of: model) == 0)
  }

  // B3

  @Test func everyYieldIsWrittenAndReturningWritesNothingMore() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let seen = KeyPathBox<[LoadableState<[Int]>]>([])
    await model.load(\.numbers) { yield in
      yield(.loaded([1]))
      seen.value.append(model.numbers)
      yield(.error(KeyPathTestError.boom))
      yield(.loading)
      yield(.loaded([1, 2]))
      seen.value.append(model.numbers)
    }
    #expect(seen.value == [.loaded([1]), .loaded([1, 2])])
    #expect(
      history.values == [.loading, .loaded([1]), .error(KeyPathTestError.boom), .loading, .loaded([1, 2])])
  }

  @Test func yieldThenThrowWritesTheError() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    await model.load(\.numbers) { yield in
      yield(.loaded([1]))
      throw KeyPathTestError.boom
    }
    #expect(history.values == [.loading, .loaded([1]), .error(KeyPathTestError.boom)])
  }

  @Test func silentYieldingLoadWritesOnlyTheYields() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    await model.load(\.numbers, silently: true) { yield in yield(.loaded([3])) }
    #expect(history.values == [.loaded([3])])
  }

  // B4

  @Test func cancelKeepsTheStateAndDropsTheResult() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let gate = Gate()
    let task: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      return [1]
    }
    await gate.untilWaiting(1)
    model.cancel(\.numbers)
    #expect(model.numbers == .loading)
    #expect(keyPathHostCount(of: model) == 0)
    gate.open()
    await task.value
    #expect(history.values == [.loading])
  }

  @Test func cancelWithoutALoadDoesNothing() {
    let model = KeyPathVM()
    model.numbers = .loaded([1])
    let history = keyPathRecorder(model, \.numbers)
    model.cancel(\.numbers)
    #expect(history.values.isEmpty)
    #expect(model.numbers == .loaded([1]))
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func cancellingTheReturnedTaskDropsTheResult() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let gate = Gate()
    let task: Task<Void, Never> = model.load(\.numbers) { yield in
      await gate.wait()
      yield(.loaded([1]))
      throw KeyPathTestError.boom
    }
    await gate.untilWaiting(1)
    task.cancel()
    gate.open()
    await task.value
    #expect(history.values == [.loading])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func resetCancelsAndWritesAbsent() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let gate = Gate()
    let task: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      return [1]
    }
    await gate.untilWaiting(1)
    model.reset(\.numbers)
    #expect(model.numbers == .absent)
    #expect(keyPathHostCount(of: model) == 0)
    gate.open()
    await task.value
    #expect(history.values == [.loading, .absent])
  }

  @Test func resetWithoutALoadWritesAbsentOnce() {
    let model = KeyPathVM()
    model.numbers = .loaded([1])
    let history = keyPathRecorder(model, \.numbers)
    model.reset(\.numbers)
    #expect(model.numbers == .absent)
    model.reset(\.numbers)
    #expect(history.values == [.absent])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func resetOfAnAbsentStateWritesNothing() {
    let model = KeyPathPlainModel()
    model.reset(\.numbers)
    #expect(model.numbers == .absent)
    #expect(model.numbersLog.isEmpty)
    #expect(keyPathHostCount(of: model) == 0)
  }

  // B5

  @Test(arguments: KeyPathControl.allCases)
  func controlErrorFromTheBlock(_ control: KeyPathControl) async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    await model.load(\.numbers) { yield in
      yield(.loaded([1]))
      throw control.error
    }
    let expected: [LoadableState<[Int]>] =
      control.resets ? [.loading, .loaded([1]), .absent] : [.loading, .loaded([1])]
    #expect(history.values == expected)
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test(arguments: KeyPathControl.allCases)
  func controlErrorFromTheReturningBlock(_ control: KeyPathControl) async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    await model.load(\.numbers) { () async throws -> [Int] in throw control.error }
    let expected: [LoadableState<[Int]>] = control.resets ? [.loading, .absent] : [.loading]
    #expect(history.values == expected)
  }

  @Test(arguments: KeyPathControl.allCases)
  func controlErrorFromOnInterrupt(_ control: KeyPathControl) async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let gate = Gate()
    let task: Task<Void, Never> = model.load(\.numbers, interrupts: [.zero]) {
      await gate.wait()
      return [1]
    } onInterrupt: { _ in
      throw control.error
    }
    // The load ends (it leaves the host table) as its activity returns to idle; a cancel writes nothing.
    await until(.activity(of: model.loadables.numbers)) { keyPathHostCount(of: model) == 0 }
    let expected: [LoadableState<[Int]>] = control.resets ? [.loading, .absent] : [.loading]
    #expect(model.numbers == expected.last)
    gate.open()
    await task.value
    #expect(history.values == expected)
  }
}

// MARK: - B6 latest wins, with blocks that ignore cancellation

@MainActor
@Suite struct LoadableSupportLatestWinsTests {
  @Test func staleResultIsDropped() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let gate = Gate()
    let stale: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      return [1]
    }
    await gate.untilWaiting(1)
    await model.load(\.numbers) { [2] }
    gate.open()
    await stale.value
    #expect(history.values == [.loading, .loaded([2])])
  }

  @Test func staleYieldIsDroppedWhileTheNewerLoadRuns() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let staleGate = Gate()
    let currentGate = Gate()
    let stale: Task<Void, Never> = model.load(\.numbers) { yield in
      await staleGate.wait()
      yield(.loaded([1]))
      yield(.error(KeyPathTestError.late))
    }
    await staleGate.untilWaiting(1)
    let current: Task<Void, Never> = model.load(\.numbers) { yield in
      await currentGate.wait()
      yield(.loaded([2]))
    }
    staleGate.open()
    await stale.value
    #expect(model.numbers == .loading)
    #expect(keyPathHostIsRunning(model, \KeyPathVM.numbers))
    currentGate.open()
    await current.value
    #expect(history.values == [.loading, .loaded([2])])
  }

  @Test func staleErrorIsDropped() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let gate = Gate()
    let stale: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      throw KeyPathTestError.late
    }
    await gate.untilWaiting(1)
    await model.load(\.numbers) { [2] }
    gate.open()
    await stale.value
    #expect(history.values == [.loading, .loaded([2])])
  }

  @Test func staleResetDoesNotResetTheFinishedNewerLoad() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let gate = Gate()
    let stale: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      throw ResetLoadable()
    }
    await gate.untilWaiting(1)
    await model.load(\.numbers) { [2] }
    gate.open()
    await stale.value
    #expect(history.values == [.loading, .loaded([2])])
  }

  @Test(arguments: KeyPathControl.allCases)
  func staleControlErrorDoesNotTouchTheRunningNewerLoad(_ control: KeyPathControl) async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let staleGate = Gate()
    let currentGate = Gate()
    let currentWasCancelled = KeyPathBox(false)
    let stale: Task<Void, Never> = model.load(\.numbers) {
      await staleGate.wait()
      throw control.error
    }
    await staleGate.untilWaiting(1)
    let current: Task<Void, Never> = model.load(\.numbers) {
      await currentGate.wait()
      currentWasCancelled.value = Task.isCancelled
      return [2]
    }
    staleGate.open()
    await stale.value
    #expect(model.numbers == .loading)
    #expect(keyPathHostIsRunning(model, \KeyPathVM.numbers))
    currentGate.open()
    await current.value
    #expect(!currentWasCancelled.value)
    #expect(history.values == [.loading, .loaded([2])])
  }

  @Test func staleZeroDelayInterruptOutcomeIsDropped() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let interrupts = KeyPathBox<[Duration]>([])
    let gate = Gate()
    // Superseded before its task even starts: its immediate interrupt must not fire or write.
    let stale: Task<Void, Never> = model.load(\.numbers, interrupts: [.zero]) {
      await gate.wait()
      return [1]
    } onInterrupt: { delay in
      interrupts.value.append(delay)
      throw TimeoutError()
    }
    await model.load(\.numbers) { [2] }
    gate.open()
    await stale.value
    #expect(interrupts.value.isEmpty)
    #expect(history.values == [.loading, .loaded([2])])
  }

  @Test func staleTimedInterruptOutcomeIsDropped() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let interrupts = KeyPathBox<[Duration]>([])
    let staleGate = Gate()
    let currentGate = Gate()
    let current = KeyPathBox<Task<Void, Never>?>(nil)
    let clock = TestClock()
    let stale: Task<Void, Never> = model.load(
      \.numbers, options: LoadOptions(clock: clock), interrupts: [.zero, .milliseconds(10)]
    ) {
      await staleGate.wait()
      return [1]
    } onInterrupt: { delay in
      interrupts.value.append(delay)
      guard delay == .zero else { throw TimeoutError() }
      // Superseded from its own first interrupt, so before its 10 ms interrupt is due.
      current.value = model.load(\.numbers) {
        await currentGate.wait()
        return [2]
      }
    }
    await until(.changes(of: current)) { current.value != nil }
    // The stale load's 10 ms interrupt was cancelled with it: moving time past it wakes nobody.
    #expect(clock.sleeperCount == 0)
    clock.advance(by: .seconds(1))
    #expect(model.numbers == .loading)
    currentGate.open()
    await current.value?.value
    staleGate.open()
    await stale.value
    #expect(interrupts.value == [.zero])
    #expect(history.values == [.loading, .loaded([2])])
  }

  /// `onInterrupt` supersedes its own load, then throws: the throw is a stale outcome and must neither write nor
  /// cancel the newer load.
  @Test(arguments: [KeyPathInterruptThrow.timeout, .cancel, .reset])
  func interruptThatStartsANewerLoadThenThrowsLeavesTheNewerLoadAlone(_ thrown: KeyPathInterruptThrow) async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let staleGate = Gate()
    let newerGate = Gate()
    let newerWasCancelled = KeyPathBox<Bool?>(nil)
    let newer = KeyPathBox<Task<Void, Never>?>(nil)
    let stale: Task<Void, Never> = model.load(\.numbers, interrupts: [.zero]) {
      await staleGate.wait()
      return [1]
    } onInterrupt: { _ in
      newer.value = model.load(\.numbers) {
        await newerGate.wait()
        newerWasCancelled.value = Task.isCancelled
        return [2]
      }
      throw thrown.error
    }
    await until(.changes(of: newer)) { newer.value != nil }
    #expect(keyPathHostIsRunning(model, \KeyPathVM.numbers))
    newerGate.open()
    await newer.value?.value
    staleGate.open()
    await stale.value
    #expect(newerWasCancelled.value == false)
    #expect(history.values == [.loading, .loaded([2])])
  }

  @Test func cancelReachesTheCurrentLoadAfterAStaleOneFinished() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let staleGate = Gate()
    let currentGate = Gate()
    let stale: Task<Void, Never> = model.load(\.numbers) {
      await staleGate.wait()
      return [1]
    }
    await staleGate.untilWaiting(1)
    let current: Task<Void, Never> = model.load(\.numbers) {
      await currentGate.wait()
      return [2]
    }
    staleGate.open()
    await stale.value
    #expect(keyPathHostIsRunning(model, \KeyPathVM.numbers))
    model.cancel(\.numbers)
    #expect(keyPathHostCount(of: model) == 0)
    currentGate.open()
    await current.value
    #expect(history.values == [.loading])
  }

  @Test func resetReachesTheCurrentLoadAfterAStaleOneFailed() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let staleGate = Gate()
    let currentGate = Gate()
    let stale: Task<Void, Never> = model.load(\.numbers) {
      await staleGate.wait()
      throw KeyPathTestError.late
    }
    await staleGate.untilWaiting(1)
    let current: Task<Void, Never> = model.load(\.numbers) {
      await currentGate.wait()
      return [2]
    }
    staleGate.open()
    await stale.value
    model.reset(\.numbers)
    currentGate.open()
    await current.value
    #expect(history.values == [.loading, .absent])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func loadCancelledByResetNeverWritesAgain() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let gate = Gate()
    let task: Task<Void, Never> = model.load(\.numbers) { yield in
      await gate.wait()
      yield(.loaded([1]))
      throw ResetLoadable()
    }
    await gate.untilWaiting(1)
    model.reset(\.numbers)
    model.numbers = .loaded([9])
    gate.open()
    await task.value
    #expect(model.numbers == .loaded([9]))
    #expect(history.values == [.loading, .absent])
  }
}

// MARK: - B7 isolation

@MainActor
@Suite struct LoadableSupportIsolationTests {
  @Test func twoInstancesLoadingTheSameKeyPathDoNotTouchEachOther() async {
    let first = KeyPathVM()
    let second = KeyPathVM()
    let firstHistory = keyPathRecorder(first, \.numbers)
    let secondHistory = keyPathRecorder(second, \.numbers)
    let firstGate = Gate()
    let secondGate = Gate()
    let cancelled = KeyPathBox<[Bool]>([])
    let firstTask: Task<Void, Never> = first.load(\.numbers) {
      await firstGate.wait()
      cancelled.value.append(Task.isCancelled)
      return [1]
    }
    await firstGate.untilWaiting(1)
    // The original package keyed tasks by the wrong object: this load cancelled the first instance's.
    let secondTask: Task<Void, Never> = second.load(\.numbers) {
      await secondGate.wait()
      cancelled.value.append(Task.isCancelled)
      return [2]
    }
    #expect(keyPathHostCount(of: first) == 1)
    #expect(keyPathHostCount(of: second) == 1)
    firstGate.open()
    await firstTask.value
    secondGate.open()
    await secondTask.value
    #expect(cancelled.value == [false, false])
    #expect(firstHistory.values == [.loading, .loaded([1])])
    #expect(secondHistory.values == [.loading, .loaded([2])])
  }

  @Test func cancelAndResetOnOneInstanceLeaveTheOtherRunning() async {
    let first = KeyPathVM()
    let second = KeyPathVM()
    let third = KeyPathVM()
    let gate = Gate()
    let tasks: [Task<Void, Never>] = [first, second, third].map { model in
      model.load(\.numbers) {
        await gate.wait()
        return [7]
      }
    }
    await gate.untilWaiting(3)
    first.cancel(\.numbers)
    second.reset(\.numbers)
    #expect(keyPathHostCount(of: first) == 0)
    #expect(keyPathHostCount(of: second) == 0)
    #expect(keyPathHostCount(of: third) == 1)
    gate.open()
    for task in tasks { await task.value }
    #expect(first.numbers == .loading)
    #expect(second.numbers == .absent)
    #expect(third.numbers == .loaded([7]))
  }

  @Test func twoPropertiesOfOneInstanceLoadAtOnce() async {
    let model = KeyPathVM()
    let numbers = keyPathRecorder(model, \.numbers)
    let other = keyPathRecorder(model, \.other)
    let numbersGate = Gate()
    let otherGate = Gate()
    let numbersTask: Task<Void, Never> = model.load(\.numbers) {
      await numbersGate.wait()
      return [1]
    }
    let otherTask: Task<Void, Never> = model.load(\.other) {
      await otherGate.wait()
      return 2
    }
    await numbersGate.untilWaiting(1)
    await otherGate.untilWaiting(1)
    #expect(keyPathHostCount(of: model) == 2)
    otherGate.open()
    await otherTask.value
    #expect(model.numbers == .loading)
    #expect(keyPathHostCount(of: model) == 1)
    numbersGate.open()
    await numbersTask.value
    #expect(numbers.values == [.loading, .loaded([1])])
    #expect(other.values == [.loading, .loaded(2)])
  }

  @Test func cancellingOnePropertyLeavesTheOtherLoading() async {
    let model = KeyPathVM()
    let gate = Gate()
    let numbersTask: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      return [1]
    }
    let otherTask: Task<Void, Never> = model.load(\.other) {
      await gate.wait()
      return 2
    }
    await gate.untilWaiting(2)
    model.cancel(\.other)
    #expect(keyPathHostIsRunning(model, \KeyPathVM.numbers))
    #expect(!keyPathHostIsRunning(model, \KeyPathVM.other))
    gate.open()
    await numbersTask.value
    await otherTask.value
    #expect(model.numbers == .loaded([1]))
    #expect(model.other == .loading)
  }
}

// MARK: - B8 async forms

@MainActor
@Suite struct LoadableSupportAsyncFormTests {
  /// Starts `await model.load(\.numbers) { … }` in a task whose block sleeps (cooperatively) for a long time, then
  /// returns a value that must never be written. Returns the caller's task once the block runs.
  private func startWaitingLoad(
    _ model: KeyPathVM, cancelled: KeyPathBox<Bool?>
  ) async -> Task<Void, Never> {
    let started = KeyPathBox(false)
    let caller = Task {
      await model.load(\.numbers) {
        started.value = true
        await untilCancelled()
        cancelled.value = Task.isCancelled
        return [1]
      }
    }
    await until(.changes(of: started)) { started.value }
    return caller
  }

  @Test func returnsWhenTheLoadEnds() async {
    let model = KeyPathVM()
    await model.load(\.numbers) { yield in yield(.loaded([1])) }
    #expect(model.numbers == .loaded([1]))
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func stoppedByCancel() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingLoad(model, cancelled: cancelled)
    #expect(keyPathHostCount(of: model) == 1)
    model.cancel(\.numbers)
    await caller.value
    #expect(cancelled.value == true)
    #expect(history.values == [.loading])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func stoppedByReset() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingLoad(model, cancelled: cancelled)
    model.reset(\.numbers)
    await caller.value
    #expect(cancelled.value == true)
    #expect(history.values == [.loading, .absent])
  }

  @Test func stoppedByANewerLoad() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingLoad(model, cancelled: cancelled)
    let newer: Task<Void, Never> = model.load(\.numbers) { [2] }
    await caller.value
    await newer.value
    #expect(cancelled.value == true)
    #expect(history.values == [.loading, .loaded([2])])
  }

  @Test func stoppedByCancellingTheCaller() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingLoad(model, cancelled: cancelled)
    caller.cancel()
    await caller.value
    #expect(cancelled.value == true)
    #expect(history.values == [.loading])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func blockInheritsTheCallersTaskLocalValues() async {
    let model = KeyPathVM()
    await KeyPathTaskLocal.$marker.withValue(42) {
      await model.load(\.other) { KeyPathTaskLocal.marker }
    }
    #expect(model.other == .loaded(42))
  }

  @Test func blockInheritsTheCallersPriority() async {
    let model = KeyPathVM()
    // Nobody awaits the caller (that would escalate its priority); the test waits for the state's change instead.
    let caller = Task(priority: .low) {
      await model.load(\.other) { Int(Task.basePriority?.rawValue ?? 0) }
    }
    await until(.changes(of: model, \.other)) { model.other.isLoaded }
    #expect(model.other == .loaded(Int(TaskPriority.low.rawValue)))
    _ = caller
  }

  @Test func yieldingAsyncFormStoppedByCancellingTheCaller() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let started = KeyPathBox(false)
    let caller = Task {
      await model.load(\.numbers) { yield in
        yield(.loaded([1]))
        started.value = true
        await untilCancelled()
        yield(.loaded([2]))
      }
    }
    await until(.changes(of: started)) { started.value }
    caller.cancel()
    await caller.value
    #expect(history.values == [.loading, .loaded([1])])
  }
}

// MARK: - B9 interrupts

@MainActor
@Suite struct LoadableSupportInterruptTests {
  @Test func delaysAccumulate() async throws {
    let model = KeyPathVM()
    let clock = TestClock()
    let history = keyPathRecorder(model, \.numbers)
    let delays = KeyPathBox<[Duration]>([])
    let gate = Gate()
    let load = Task {
      await model.load(
        \.numbers, options: LoadOptions(clock: clock),
        interrupts: [.milliseconds(5), .milliseconds(10), .milliseconds(15)]
      ) {
        await gate.wait()
        return [1]
      } onInterrupt: { delay in
        delays.value.append(delay)
        if delays.value.count == 3 { gate.open() }
      }
    }
    for step in [5, 10, 15] {
      try await clock.waitForSleepers(1)
      clock.advance(by: .milliseconds(step))
    }
    await load.value
    #expect(delays.value == [.milliseconds(5), .milliseconds(15), .milliseconds(30)])
    #expect(history.values == [.loading, .loaded([1])])
  }

  @Test func timeoutErrorEndsTheLoad() async throws {
    let model = KeyPathVM()
    let clock = TestClock()
    let history = keyPathRecorder(model, \.numbers)
    let blockCancelled = KeyPathBox<Bool?>(nil)
    let load = Task {
      await model.load(\.numbers, options: LoadOptions(clock: clock), interrupts: [.milliseconds(5)]) {
        try? await clock.sleep(for: .seconds(10))
        blockCancelled.value = Task.isCancelled
        return [1]
      } onInterrupt: { _ in
        throw TimeoutError()
      }
    }
    try await clock.waitForSleepers(2)  // the block and the interrupt
    clock.advance(by: .milliseconds(5))
    await load.value
    #expect(blockCancelled.value == true)
    #expect(history.values == [.loading, .error(TimeoutError())])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func timeoutErrorEndsAYieldingLoadAndLaterYieldsAreDropped() async throws {
    let model = KeyPathVM()
    let clock = TestClock()
    let history = keyPathRecorder(model, \.numbers)
    let task: Task<Void, Never> = model.load(
      \.numbers, options: LoadOptions(clock: clock), interrupts: [.milliseconds(5)]
    ) { yield in
      yield(.loaded([1]))
      try? await clock.sleep(for: .seconds(10))
      yield(.loaded([2]))
    } onInterrupt: { _ in
      throw TimeoutError()
    }
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(5))
    await task.value
    #expect(history.values == [.loading, .loaded([1]), .error(TimeoutError())])
  }

  @Test func zeroAndNegativeDelaysFireImmediatelyAndAddNothing() async throws {
    let model = KeyPathVM()
    let delays = KeyPathBox<[Duration]>([])
    let gate = Gate()
    let clock = TestClock()
    let load = Task {
      await model.load(
        \.numbers, options: LoadOptions(clock: clock),
        interrupts: [.zero, .milliseconds(-50), .milliseconds(5), .seconds(-1)]
      ) {
        await gate.wait()
        return [1]
      } onInterrupt: { delay in
        delays.value.append(delay)
        if delays.value.count == 4 { gate.open() }
      }
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(5))
    await load.value
    #expect(delays.value == [.zero, .zero, .milliseconds(5), .milliseconds(5)])
    #expect(model.numbers == .loaded([1]))
  }

  @Test func zeroDelayFiresWhileTheBlockWaits() async {
    let model = KeyPathVM()
    let gate = Gate()
    // The block can only finish once the interrupt fired: no time has to pass for that.
    await model.load(\.numbers, interrupts: [.zero]) {
      await gate.wait()
      return [1]
    } onInterrupt: { _ in
      gate.open()
    }
    #expect(model.numbers == .loaded([1]))
  }

  @Test func noInterruptsMeansNoCalls() async {
    let model = KeyPathVM()
    let calls = KeyPathBox(0)
    await model.load(\.numbers, interrupts: []) {
      [1]
    } onInterrupt: { _ in
      calls.value += 1
    }
    #expect(calls.value == 0)
    #expect(model.numbers == .loaded([1]))
  }

  @Test func interruptsStopWhenTheBlockFinishes() async {
    let model = KeyPathVM()
    let clock = TestClock()
    let delays = KeyPathBox<[Duration]>([])
    let gate = Gate()
    await model.load(
      \.numbers, options: LoadOptions(clock: clock), interrupts: [.zero, .milliseconds(20), .milliseconds(20)]
    ) {
      await gate.wait()
      return [1]
    } onInterrupt: { delay in
      delays.value.append(delay)
      gate.open()
    }
    #expect(clock.sleeperCount == 0)  // the remaining interrupts stopped with the block
    clock.advance(by: .seconds(1))
    #expect(delays.value == [.zero])
    #expect(model.numbers == .loaded([1]))
  }

  @Test func onInterruptThatReturnsKeepsTheLoadGoing() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let gate = Gate()
    await model.load(\.numbers, interrupts: [.zero]) { yield in
      await gate.wait()
      yield(.loaded([1]))
    } onInterrupt: { _ in
      gate.open()
    }
    #expect(history.values == [.loading, .loaded([1])])
  }

  @Test func plainErrorFromOnInterruptIsWritten() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let clock = TestClock()
    await model.load(\.numbers, silently: true, options: LoadOptions(clock: clock), interrupts: [.zero]) {
      try? await clock.sleep(for: .seconds(10))  // ended by the interrupt's error, at once
      return [1]
    } onInterrupt: { _ in
      throw KeyPathTestError.boom
    }
    #expect(history.values == [.error(KeyPathTestError.boom)])
  }
}

// MARK: - Observation

/// Drives the state at `keyPath` through every kind of change a key-path call makes.
@MainActor
func runLoadableScenario<Model: LoadableSupport>(
  _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, LoadableState<[Int]>>
) async {
  await model.load(keyPath) { [1] }
  await model.load(keyPath) { yield in
    yield(.loaded([2]))
    yield(.loaded([2, 3]))
  }
  await model.load(keyPath) { throw KeyPathTestError.boom }
  let gate = Gate()
  let cancelled: Task<Void, Never> = model.load(keyPath) {
    await gate.wait()
    return [4]
  }
  await gate.untilWaiting(1)
  model.cancel(keyPath)
  gate.open()
  await cancelled.value
  model.reset(keyPath)
  model.reset(keyPath)
  await model.load(keyPath, silently: true) { throw ResetLoadable() }
  await model.load(keyPath) { throw ResetLoadable() }
  await model.load(keyPath, interrupts: [.zero]) {
    await untilCancelled()
    return [5]
  } onInterrupt: { _ in
    throw TimeoutError()
  }
}

/// What ``runLoadableScenario(_:_:)`` writes, change by change.
let loadableScenarioHistory: [LoadableState<[Int]>] = [
  .loading, .loaded([1]),
  .loading, .loaded([2]), .loaded([2, 3]),
  .loading, .error(KeyPathTestError.boom),
  .loading,
  .absent,
  .loading, .absent,
  .loading, .error(TimeoutError()),
]

@MainActor
@Suite struct LoadableSupportObservationTests {
  @Test func plainPropertyOfAnObservableModel() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    await runLoadableScenario(model, \.numbers)
    #expect(history.values == loadableScenarioHistory)
  }

  @Test func propertyWhoseDidSetNotifiesIsStillNotifiedOnce() async {
    let model = KeyPathDidSetModel()
    let history = keyPathRecorder(model, \.numbers)
    model.numbers = .loaded([0])
    #expect(history.values == [.loaded([0])])  // the didSet does notify on its own
    await runLoadableScenario(model, \.numbers)
    #expect(history.values == [.loaded([0])] + loadableScenarioHistory)
    #expect(model.numbersLog == history.values)
  }

  /// A key-path write is one write of the property, whatever the property is: its `willSet` and `didSet` run once
  /// each, with the new and the old value, and a computed property's setter runs once, with the written state.
  @Test func propertyObserversAndSettersRunOncePerWrite() async {
    let model = KeyPathAccessorModel()
    await model.load(\.observed) { yield in
      yield(.loaded([1]))
      yield(.loaded([2]))
    }
    #expect(
      model.log == [
        "willSet loading", "didSet absent", "willSet loaded([1])", "didSet loading",
        "willSet loaded([2])", "didSet loaded([1])",
      ])
    model.log = []
    await model.load(\.computed) { yield in
      yield(.loaded([1]))
      yield(.loaded([2]))
    }
    #expect(model.log.filter { $0.hasPrefix("set") } == ["set loading", "set loaded([1])", "set loaded([2])"])
    #expect(model.storage == .loaded([2]))
  }

  @Test func observedPropertyIsNotifiedOnce() async {
    let model = KeyPathObservedModel()
    let history = keyPathRecorder(model, \.numbers)
    model.numbers = .loaded([0])
    #expect(history.values == [.loaded([0])])  // @Observed does notify on its own
    await runLoadableScenario(model, \.numbers)
    #expect(history.values == [.loaded([0])] + loadableScenarioHistory)
  }

  @Test func loadableWrapperPropertyIsNotifiedOnce() async {
    let model = KeyPathWrappedModel()
    let history = keyPathRecorder(model, \.numbers)
    await runLoadableScenario(model, \.numbers)
    #expect(history.values == loadableScenarioHistory)
  }

  @Test func classThatIsNotAnObservableModelSeesEveryWriteInDidSet() async {
    let model = KeyPathPlainModel()
    await runLoadableScenario(model, \.numbers)
    #expect(model.numbersLog == loadableScenarioHistory)
  }

  @Test func observerStartingANewLoadFromTheResultIsNotDisturbed() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let next = KeyPathBox<Task<Void, Never>?>(nil)
    let token = model.observe(\.numbers) { state in
      if state == .loaded([1]) {
        next.value = model.load(\.numbers) { [2] }
      }
    }
    await model.load(\.numbers) { [1] }
    await next.value?.value
    #expect(history.values == [.loading, .loaded([1]), .loading, .loaded([2])])
    #expect(keyPathHostCount(of: model) == 0)
    token.cancel()
  }

  @Test func observerResettingFromAYieldStopsTheLoad() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    let token = model.observe(\.numbers) { state in
      if state == .loaded([1]) { model.reset(\.numbers) }
    }
    await model.load(\.numbers) { yield in
      yield(.loaded([1]))
      yield(.loaded([2]))
    }
    #expect(history.values == [.loading, .loaded([1]), .absent])
    #expect(keyPathHostCount(of: model) == 0)
    token.cancel()
  }

  @Test func cancelledObserverHearsNothingMore() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    await model.load(\.numbers) { [1] }
    history.token?.cancel()
    await model.load(\.numbers) { [2] }
    #expect(history.values == [.loading, .loaded([1])])
  }
}

// MARK: - Members of self without `self.`

@MainActor
@Suite struct LoadableSupportImplicitSelfTests {
  @Test func returningForm() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    model.source = [4, 5]
    model.refresh()
    #expect(model.numbers == .loading)
    await history.wait(forCount: 2)
    #expect(history.values == [.loading, .loaded([4, 5])])
  }

  @Test func asyncForm() async {
    let model = KeyPathVM()
    await model.refreshAndWait()
    #expect(model.numbers == .loaded([1, 2, 3]))
  }

  @Test func failingForm() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    model.refreshFailing()
    await history.wait(forCount: 2)
    #expect(history.values == [.loading, .error(KeyPathTestError.boom)])
  }

  @Test func yieldingForm() async {
    let model = KeyPathVM()
    let history = keyPathRecorder(model, \.numbers)
    model.cached = [9]
    model.stream()
    await history.wait(forCount: 3)
    #expect(history.values == [.loading, .loaded([9]), .loaded([1, 2, 3])])
  }

  @Test func interruptForms() async {
    let model = KeyPathVM()
    await model.refreshWatchingDelays()
    #expect(model.numbers == .loaded([1, 2, 3]))
    #expect(model.slowInterrupts.count <= 1)
    let history = keyPathRecorder(model, \.numbers)
    model.streamWatchingDelays()
    await history.wait(forCount: 2)
    #expect(history.values == [.loading, .loaded([1, 2, 3])])
  }

  @Test func controlMembers() async {
    let model = KeyPathVM()
    let gate = Gate()
    let numbers: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      return [1]
    }
    let other: Task<Void, Never> = model.load(\.other) {
      await gate.wait()
      return 1
    }
    await gate.untilWaiting(2)
    model.stopAll()
    #expect(keyPathHostCount(of: model) == 0)
    gate.open()
    await numbers.value
    await other.value
    #expect(model.numbers == .loading)
    #expect(model.other == .absent)
  }
}

// MARK: - Subclasses

/// Key paths with different roots are different states (`\KeyPathSubVM.numbers != \KeyPathBaseVM.numbers`, and Swift
/// offers no root-independent identity), so `LoadableSupport` documents the rule: address a state a subclass
/// inherits through the class that declares it. These tests follow the rule from subclass code — loads, cancels and
/// observers all go through `KeyPathBaseVM` — and show that it then behaves as one state (B6, B7).
@MainActor
@Suite struct LoadableSupportSubclassTests {
  @Test func cancelFromSubclassCodeReachesALoadStartedInTheBaseClass() async {
    let model = KeyPathSubVM()
    let gate = Gate()
    let stale = model.refresh(after: gate)
    await gate.untilWaiting(1)
    (model as KeyPathBaseVM).cancel(\.numbers)
    #expect(keyPathHostCount(of: model) == 0)
    gate.open()
    await stale.value  // the cancelled block has returned: it wrote nothing and registered nothing
    #expect(keyPathHostCount(of: model) == 0)
    #expect(model.numbers == .loading)
  }

  @Test func newerLoadFromSubclassCodeSupersedesALoadStartedInTheBaseClass() async {
    let model = KeyPathSubVM()
    let gate = Gate()
    let stale = model.refresh(after: gate, value: [1])
    await gate.untilWaiting(1)
    await (model as KeyPathBaseVM).load(\.numbers) { [2] }
    gate.open()
    await stale.value  // the superseded block has returned
    #expect(keyPathHostCount(of: model) == 0)
    #expect(model.numbers == .loaded([2]))
  }

  @Test func observerRootedAtTheBaseClassSeesLoadsStartedInTheBaseClass() async {
    let model = KeyPathSubVM()
    let history = keyPathRecorder(model as KeyPathBaseVM, \.numbers)
    let gate = Gate()
    gate.open()
    await model.refresh(after: gate).value
    #expect(model.numbers.isLoaded)
    #expect(history.values == [.loading, .loaded([1])])
  }

  @Test func observerRootedAtTheBaseClassSeesLoadsStartedFromSubclassCode() async {
    let model = KeyPathSubVM()
    let history = keyPathRecorder(model as KeyPathBaseVM, \.numbers)
    await (model as KeyPathBaseVM).load(\.numbers) { [2] }
    #expect(model.numbers == .loaded([2]))
    #expect(history.values == [.loading, .loaded([2])])
  }
}

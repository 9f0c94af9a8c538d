import ProcessedTesting
import Testing

@testable import Processed

// MARK: - B1–B5 on key paths

@MainActor
@Suite struct LoadableSupportTests {
  // B1

  @Test func startWritesLoadingSynchronouslyThenTheValue() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
    await model.load(\.numbers, silently: true) { [1] }
    #expect(history.values == [.loaded([1])])
  }

  @Test func loadingIsNotWrittenAgainWhenAlreadyLoading() async {
    let model = KeyPathVM()
    model.numbers = .loading
    let history = StateRecorder(model, \.numbers)
    await model.load(\.numbers) { [1] }
    #expect(history.values == [.loaded([1])])
  }

  @Test func loadingIsWrittenFromEveryOtherState() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    await model.load(\.numbers) { [1] }
    await model.load(\.numbers) { throw KeyPathTestError.boom }
    await model.load(\.numbers) { [2] }
    #expect(
      history.values == [.loading, .loaded([1]), .loading, .error(KeyPathTestError.boom), .loading, .loaded([2])])
  }

  @Test func newerLoadCancelsTheRunningOneWithoutWritingLoadingTwice() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
    await model.load(\.numbers) { throw KeyPathTestError.boom }
    #expect(history.values == [.loading, .error(KeyPathTestError.boom)])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func thrownCancellationErrorLeavesTheState() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    await model.load(\.numbers) { throw CancellationError() }
    #expect(history.values == [.loading])
    #expect(keyPathHostCount(of: model) == 0)
  }

  // B3

  @Test func everyYieldIsWrittenAndReturningWritesNothingMore() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
    await model.load(\.numbers) { yield in
      yield(.loaded([1]))
      throw KeyPathTestError.boom
    }
    #expect(history.values == [.loading, .loaded([1]), .error(KeyPathTestError.boom)])
  }

  @Test func silentYieldingLoadWritesOnlyTheYields() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    await model.load(\.numbers, silently: true) { yield in yield(.loaded([3])) }
    #expect(history.values == [.loaded([3])])
  }

  // B4

  @Test func cancelKeepsTheStateAndDropsTheResult() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
    model.cancel(\.numbers)
    #expect(history.values.isEmpty)
    #expect(model.numbers == .loaded([1]))
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func cancellingTheReturnedTaskDropsTheResult() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
    await model.load(\.numbers) { () async throws -> [Int] in throw control.error }
    let expected: [LoadableState<[Int]>] = control.resets ? [.loading, .absent] : [.loading]
    #expect(history.values == expected)
  }

  @Test(arguments: KeyPathControl.allCases)
  func controlErrorFromOnInterrupt(_ control: KeyPathControl) async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
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

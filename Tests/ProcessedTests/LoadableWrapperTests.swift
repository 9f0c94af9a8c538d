import ProcessedTesting
import Testing

@testable import Processed

/// A class that holds `@Loadable` properties, as a view model would.
@MainActor
private final class NumbersHolder {
  @Loadable var numbers: LoadableState<[Int]>
  @Loadable var count: LoadableState<Int> = .loaded(0)
}

/// A struct that holds a `@Loadable` property, as a SwiftUI view would.
@MainActor
private struct NumbersScreen {
  @Loadable var numbers: LoadableState<[Int]>
}

/// An ``ObservableModel`` whose `@Loadable` property reaches `observe(\.numbers)`.
@MainActor
private final class ObservedNumbersModel: ObservableModel {
  let observers = ObserverRegistry()
  @Loadable var numbers: LoadableState<[Int]>
}

/// `@Loadable`: the wrapper, its controller and B1–B5 for loads.
@MainActor
@Suite struct LoadableWrapperTests {
  // MARK: Declaring

  @Test func standaloneWrapperStartsAbsentAndLoads() async {
    let numbers = Loadable<[Int]>()
    #expect(numbers.wrappedValue == .absent)
    let recorder = StateRecorder(numbers.projectedValue)
    await numbers.projectedValue.load { [1, 2, 3] }
    #expect(recorder.values == [.loading, .loaded([1, 2, 3])])
    #expect(numbers.projectedValue.state == .loaded([1, 2, 3]))
  }

  @Test func localWrapperHonoursItsInitialValue() async {
    @Loadable var count: LoadableState<Int> = .loaded(7)
    #expect(count == .loaded(7))
    let recorder = StateRecorder($count)
    await $count.load { 8 }
    #expect(recorder.values == [.loading, .loaded(8)])
    #expect(count == .loaded(8))
  }

  @Test func classPropertyLoadsThroughItsProjectedValue() async {
    let holder = NumbersHolder()
    #expect(holder.numbers == .absent)
    #expect(holder.count == .loaded(0))
    let recorder = StateRecorder(holder.$numbers)
    let task: Task<Void, Never> = holder.$numbers.load { [4] }
    await task.value
    #expect(recorder.values == [.loading, .loaded([4])])
    #expect(holder.numbers == .loaded([4]))
    #expect(holder.count == .loaded(0))
  }

  @Test func structPropertyLoadsThroughItsProjectedValue() async {
    let screen = NumbersScreen()
    let recorder = StateRecorder(screen.$numbers)
    await screen.$numbers.load { [5] }
    #expect(recorder.values == [.loading, .loaded([5])])
    #expect(screen.numbers == .loaded([5]))
  }

  @Test func wrapperIsCreatedOffTheMainActorAndSentToIt() async {
    let numbers = await Task.detached { Loadable<[Int]>(wrappedValue: .loaded([1])) }.value
    #expect(numbers.wrappedValue == .loaded([1]))
    await numbers.projectedValue.load { [2] }
    #expect(numbers.wrappedValue == .loaded([2]))
  }

  // MARK: Reference semantics

  @Test func copiesOfAStructShareOneState() async {
    let original = NumbersScreen()
    let copy = original
    let recorder = StateRecorder(original.$numbers)
    await copy.$numbers.load { [1] }
    #expect(original.numbers == .loaded([1]))
    #expect(recorder.values == [.loading, .loaded([1])])
    original.numbers = .loaded([2])
    #expect(copy.numbers == .loaded([2]))
  }

  @Test func copiesOfAStandaloneWrapperShareOneStateAndItsLoad() async {
    let numbers = Loadable<Int>()
    let copy = numbers
    let gate = Gate()
    let recorder = StateRecorder(numbers.projectedValue)
    let task: Task<Void, Never> = copy.projectedValue.load {
      await gate.wait()
      return 1
    }
    #expect(numbers.wrappedValue == .loading)
    // Cancelling through the other copy reaches the load started through this one.
    numbers.projectedValue.cancel()
    gate.open()
    await task.value
    #expect(recorder.values == [.loading])
    #expect(copy.wrappedValue == .loading)
  }

  // MARK: wrappedValue

  @Test func settingWrappedValueStoresAndNotifies() {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    count = .loaded(3)
    count = .error(WrapperError(code: 1))
    #expect(recorder.values == [.loaded(3), .error(WrapperError(code: 1))])
    #expect(count == .error(WrapperError(code: 1)))
  }

  @Test func settingWrappedValueCancelsTheRunningLoadFirst() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let gate = Gate()
    let sawCancellation = WrapperLatch<Bool>()
    let task: Task<Void, Never> = $count.load {
      await gate.wait()
      sawCancellation.fulfil(Task.isCancelled)
      return 1
    }
    await gate.untilWaiting(1)
    let storage = $count.storage
    var runningWhenNotified: [Bool] = []
    let probe = $count.observe { _ in runningWhenNotified.append(storage.tracker.isRunning) }
    count = .loaded(5)
    probe.cancel()
    #expect(runningWhenNotified == [false], "observers were notified before the load was cancelled")
    #expect(recorder.values == [.loading, .loaded(5)])
    gate.open()
    await task.value
    #expect(await sawCancellation.value() == true)
    #expect(recorder.values == [.loading, .loaded(5)])
    #expect(count == .loaded(5))
  }

  // MARK: B1 start

  @Test func loadingIsWrittenSynchronouslyWhenTheLoadStarts() async {
    let numbers = Loadable<Int>()
    let recorder = StateRecorder(numbers.projectedValue)
    let gate = Gate()
    let task: Task<Void, Never> = numbers.projectedValue.load {
      await gate.wait()
      return 1
    }
    // No suspension point between `load` and these checks.
    #expect(recorder.values == [.loading])
    #expect(numbers.wrappedValue == .loading)
    gate.open()
    await task.value
    #expect(recorder.values == [.loading, .loaded(1)])
  }

  @Test func silentLoadDoesNotWriteLoading() async {
    @Loadable var count: LoadableState<Int> = .loaded(1)
    let recorder = StateRecorder($count)
    let gate = Gate()
    let task: Task<Void, Never> = $count.load(silently: true) {
      await gate.wait()
      return 2
    }
    #expect(count == .loaded(1))
    gate.open()
    await task.value
    #expect(recorder.values == [.loaded(2)])
  }

  @Test func silentYieldingLoadDoesNotWriteLoading() async {
    @Loadable var count: LoadableState<Int> = .loaded(1)
    let recorder = StateRecorder($count)
    await $count.load(silently: true) { yield in
      yield(.loaded(2))
    }
    #expect(recorder.values == [.loaded(2)])
  }

  @Test func secondLoadWhileLoadingDoesNotWriteLoadingAgain() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let gate = Gate()
    let first: Task<Void, Never> = $count.load {
      await gate.wait()
      return 1
    }
    let second: Task<Void, Never> = $count.load { 2 }
    #expect(recorder.values == [.loading])
    await second.value
    gate.open()
    await first.value
    #expect(recorder.values == [.loading, .loaded(2)])
  }

  @Test func loadWhenStateWasSetToLoadingByHandDoesNotWriteItAgain() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    count = .loading
    await $count.load { 1 }
    #expect(recorder.values == [.loading, .loaded(1)])
  }

  @Test func taskFormReturnsTheLoadsTask() async {
    @Loadable var count: LoadableState<Int>
    let gate = Gate()
    let task: Task<Void, Never> = $count.load {
      await gate.wait()
      return 1
    }
    gate.open()
    await task.value
    #expect(count == .loaded(1))
  }

  @Test func asyncFormReturnsWhenTheLoadEnded() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    await $count.load {
      await Task.yield()  // the load suspends before it ends
      return 1
    }
    #expect(count == .loaded(1))
    #expect(recorder.values == [.loading, .loaded(1)])
    #expect($count.storage.tracker.isRunning == false)
  }

  @Test func taskFormRunsAtTheGivenPriority() async {
    @Loadable var priority: LoadableState<TaskPriority?>
    let task: Task<Void, Never> = $priority.load(priority: .low) { Task.basePriority }
    await task.value
    #expect(priority == .loaded(.low))
  }

  // MARK: B2 result

  @Test func returnedValueIsLoaded() async {
    @Loadable var numbers: LoadableState<[Int]>
    let recorder = StateRecorder($numbers)
    await $numbers.load { [1, 2] }
    #expect(recorder.values == [.loading, .loaded([1, 2])])
  }

  @Test func thrownErrorIsWrittenAsError() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    await $count.load { throw WrapperError(code: 7) }
    #expect(recorder.values == [.loading, .error(WrapperError(code: 7))])
    #expect(recorder.values != [.loading, .error(WrapperError(code: 8))])
    #expect(count.error as? WrapperError == WrapperError(code: 7))
  }

  @Test func errorFromYieldingBlockIsWrittenAfterItsYields() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    await $count.load { yield in
      yield(.loaded(1))
      throw WrapperError(code: 2)
    }
    #expect(recorder.values == [.loading, .loaded(1), .error(WrapperError(code: 2))])
  }

  // MARK: B3 yield

  @Test func everyYieldIsWrittenAndReturningWritesNothingMore() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    await $count.load { yield in
      yield(.loading)
      yield(.loaded(1))
      yield(.loading)
      yield(.absent)
      yield(.error(WrapperError(code: 1)))
      yield(.loaded(2))
    }
    #expect(
      recorder.values == [
        .loading, .loading, .loaded(1), .loading, .absent, .error(WrapperError(code: 1)), .loaded(2),
      ])
    #expect(count == .loaded(2))
  }

  @Test func yieldingBlockThatYieldsNothingLeavesLoading() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    await $count.load { _ in }
    #expect(recorder.values == [.loading])
    #expect($count.storage.tracker.isRunning == false)
  }

  @Test func yieldsAcrossSuspensionsAreWrittenInOrder() async throws {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let gate = Gate()
    let task: Task<Void, Never> = $count.load { yield in
      yield(.loaded(1))
      await gate.wait()
      yield(.loaded(2))
    }
    try await recorder.wait(forCount: 2)
    #expect(recorder.values == [.loading, .loaded(1)])
    gate.open()
    await task.value
    #expect(recorder.values == [.loading, .loaded(1), .loaded(2)])
  }

  // MARK: B4 cancellation and reset

  @Test func cancelLeavesTheStateAsItIs() async throws {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let gate = Gate()
    let task: Task<Void, Never> = $count.load { yield in
      yield(.loaded(1))
      await gate.wait()
      yield(.loaded(2))
      throw WrapperError(code: 3)
    }
    try await recorder.wait(forCount: 2)
    $count.cancel()
    #expect(count == .loaded(1))
    gate.open()
    await task.value
    #expect(recorder.values == [.loading, .loaded(1)])
    #expect($count.storage.tracker.isRunning == false)
  }

  @Test func cancelWhenNothingRunsChangesNothing() {
    @Loadable var count: LoadableState<Int> = .loaded(1)
    let recorder = StateRecorder($count)
    $count.cancel()
    #expect(recorder.values.isEmpty)
    #expect(count == .loaded(1))
  }

  @Test func cancellingTheReturnedTaskStopsFurtherWrites() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let gate = Gate()
    let sawCancellation = WrapperLatch<Bool>()
    let task: Task<Void, Never> = $count.load { yield in
      await gate.wait()
      sawCancellation.fulfil(Task.isCancelled)
      yield(.loaded(1))
      throw WrapperError(code: 1)
    }
    await gate.untilWaiting(1)
    task.cancel()
    gate.open()
    await task.value
    #expect(await sawCancellation.value() == true)
    #expect(recorder.values == [.loading])
    #expect($count.storage.tracker.isRunning == false)
  }

  @Test func blockThrowingCancellationErrorLeavesTheState() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    await $count.load { () async throws -> Int in throw CancellationError() }
    #expect(recorder.values == [.loading])
    await $count.load { yield in
      yield(.loaded(1))
      throw CancellationError()
    }
    // The state was still `.loading`, so the second load wrote no `.loading` of its own.
    #expect(recorder.values == [.loading, .loaded(1)])
    #expect($count.storage.tracker.isRunning == false)
  }

  @Test func resetCancelsAndWritesAbsent() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let gate = Gate()
    let task: Task<Void, Never> = $count.load {
      await gate.wait()
      return 1
    }
    let storage = $count.storage
    var runningWhenNotified: [Bool] = []
    let probe = $count.observe { _ in runningWhenNotified.append(storage.tracker.isRunning) }
    $count.reset()
    probe.cancel()
    #expect(runningWhenNotified == [false])
    #expect(count == .absent)
    gate.open()
    await task.value
    #expect(recorder.values == [.loading, .absent])
  }

  @Test func resetWhenAlreadyAbsentWritesNothing() async throws {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    $count.reset()
    #expect(recorder.values.isEmpty)
    // Also while a load runs that has yielded `.absent`: the load is cancelled, nothing is written.
    let gate = Gate()
    let task: Task<Void, Never> = $count.load { yield in
      yield(.absent)
      await gate.wait()
      yield(.loaded(1))
    }
    try await recorder.wait(forCount: 2)
    $count.reset()
    gate.open()
    await task.value
    #expect(recorder.values == [.loading, .absent])
  }

  // MARK: B5 control errors

  @Test func cancelLoadableFromTheBlockActsAsCancel() async {
    @Loadable var count: LoadableState<Int> = .loaded(1)
    let recorder = StateRecorder($count)
    await $count.load { yield in
      yield(.loaded(2))
      throw CancelLoadable()
    }
    #expect(recorder.values == [.loading, .loaded(2)])
    #expect($count.storage.tracker.isRunning == false)
  }

  @Test func resetLoadableFromTheBlockActsAsReset() async {
    @Loadable var count: LoadableState<Int> = .loaded(1)
    let recorder = StateRecorder($count)
    await $count.load { () async throws -> Int in throw ResetLoadable() }
    #expect(recorder.values == [.loading, .absent])
    #expect($count.storage.tracker.isRunning == false)
  }

  @Test func resetLoadableAfterYieldingAbsentWritesNothingMore() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    await $count.load { yield in
      yield(.absent)
      throw ResetLoadable()
    }
    #expect(recorder.values == [.loading, .absent])
  }

  @Test func processControlErrorsWorkInLoadsToo() async {
    @Loadable var count: LoadableState<Int> = .loaded(1)
    let recorder = StateRecorder($count)
    await $count.load { () async throws -> Int in throw CancelProcess() }
    #expect(recorder.values == [.loading])
    await $count.load { () async throws -> Int in throw ResetProcess() }
    #expect(recorder.values == [.loading, .absent])
  }

  // MARK: ObservableModel

  @Test func modelObserverSeesEveryChangeOfAWrapperPropertyOnce() async {
    let model = ObservedNumbersModel()
    let history = StateRecorder<LoadableState<[Int]>>()
    // `model.numbers` was never read before `observe`.
    let token = model.observe(\.numbers) { history.record($0) }
    await model.$numbers.load { yield in
      yield(.loaded([1]))
      yield(.loaded([1, 2]))
    }
    await model.$numbers.load { [3] }
    model.$numbers.reset()
    model.numbers = .loaded([4])
    #expect(
      history.values == [.loading, .loaded([1]), .loaded([1, 2]), .loading, .loaded([3]), .absent, .loaded([4])])
    token.cancel()
  }

  @Test func modelObserverAndWrapperObserverEachSeeEveryChangeOnce() async {
    let model = ObservedNumbersModel()
    let viaModel = StateRecorder<LoadableState<[Int]>>()
    let token = model.observe(\.numbers) { viaModel.record($0) }
    let viaWrapper = StateRecorder(model.$numbers)
    await model.$numbers.load { [1] }
    #expect(viaModel.values == [.loading, .loaded([1])])
    #expect(viaWrapper.values == [.loading, .loaded([1])])
    token.cancel()
  }

  @Test func modelObserverRegisteredAfterALoadStartedSeesTheRest() async {
    let model = ObservedNumbersModel()
    let gate = Gate()
    let task: Task<Void, Never> = model.$numbers.load {
      await gate.wait()
      return [1]
    }
    let history = StateRecorder<LoadableState<[Int]>>()
    let token = model.observe(\.numbers) { history.record($0) }
    gate.open()
    await task.value
    #expect(history.values == [.loaded([1])])
    token.cancel()
  }
}

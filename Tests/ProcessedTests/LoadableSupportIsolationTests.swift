import ProcessedTesting
import Testing

@testable import Processed

// MARK: - B7 isolation

@MainActor
@Suite struct LoadableSupportIsolationTests {
  @Test func twoInstancesLoadingTheSameKeyPathDoNotTouchEachOther() async {
    let first = KeyPathVM()
    let second = KeyPathVM()
    let firstHistory = StateRecorder(first, \.numbers)
    let secondHistory = StateRecorder(second, \.numbers)
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
    let numbers = StateRecorder(model, \.numbers)
    let other = StateRecorder(model, \.other)
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

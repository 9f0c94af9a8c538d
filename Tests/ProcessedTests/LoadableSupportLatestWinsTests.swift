import ProcessedTesting
import Testing

@testable import Processed

// MARK: - B6 latest wins, with blocks that ignore cancellation

@MainActor
@Suite struct LoadableSupportLatestWinsTests {
  @Test func staleResultIsDropped() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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

import ProcessedTesting
import Testing

@testable import Processed

// MARK: - B6 latest wins, with blocks that ignore cancellation

@MainActor
@Suite struct ProcessSupportLatestWinsTests {
  @Test func staleFinishIsDropped() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.action)
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
    let history = StateRecorder(model, \.action)
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
    let history = StateRecorder(model, \.action)
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
    let history = StateRecorder(model, \.action)
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
    let history = StateRecorder(model, \.action)
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
    let history = StateRecorder(model, \.action)
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
    let history = StateRecorder(model, \.action)
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

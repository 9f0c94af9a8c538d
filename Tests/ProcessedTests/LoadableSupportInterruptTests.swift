import ProcessedTesting
import Testing

@testable import Processed

// MARK: - B9 interrupts

@MainActor
@Suite struct LoadableSupportInterruptTests {
  @Test func delaysAccumulate() async throws {
    let model = KeyPathVM()
    let clock = TestClock()
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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
    let history = StateRecorder(model, \.numbers)
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

import ProcessedTesting
import Testing

@testable import Processed

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
    let history = StateRecorder(model, \.action)
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

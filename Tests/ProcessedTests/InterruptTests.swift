import ProcessedTesting
import Testing

@testable import Processed

/// A model whose load reports "slow network" through a separate property from `onInterrupt`.
@MainActor
private final class SlowFeedModel {
  @Loadable var feed: LoadableState<[String]>
  var message: String?
}

/// The errors an `onInterrupt` handler throws in the tests that start a newer load from it.
private enum WrapperInterruptError: String, Sendable, CustomTestStringConvertible {
  case timeout, cancel, reset

  var value: any Error {
    switch self {
    case .timeout: TimeoutError()
    case .cancel: CancelLoadable()
    case .reset: ResetLoadable()
    }
  }

  var testDescription: String { rawValue }
}

/// B9 interrupts (and B5 control errors thrown from `onInterrupt`). Time goes through a `TestClock` in the wrapper's
/// declaration options (the load calls are the phase-1 calls, unchanged); the blocks wait on gates until the
/// interrupts they expect have been recorded. Tests with only zero or negative delays need no clock.
@MainActor
@Suite struct InterruptTests {
  // MARK: Delays

  @Test func delaysAccumulate() async throws {
    let clock = TestClock()
    @Loadable(options: LoadOptions(clock: clock)) var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let delays = StateRecorder<Duration>()
    let gate = Gate()
    let task: Task<Void, Never> = $count.load(interrupts: [.milliseconds(50), .milliseconds(100)]) {
      await gate.wait()
      return 1
    } onInterrupt: { delay in
      delays.record(delay)
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(49))
    #expect(delays.values.isEmpty)
    clock.advance(by: .milliseconds(1))
    try await delays.wait(forCount: 1)
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(100))
    try await delays.wait(forCount: 2)
    gate.open()
    await task.value
    #expect(delays.values == [.milliseconds(50), .milliseconds(150)])
    #expect(recorder.values == [.loading, .loaded(1)])
  }

  @Test func delaysAccumulateForYieldingLoadsAndProcesses() async throws {
    let clock = TestClock()
    @Loadable(options: LoadOptions(clock: clock)) var count: LoadableState<Int>
    @Process(options: LoadOptions(clock: clock)) var save
    let loadDelays = StateRecorder<Duration>()
    let runDelays = StateRecorder<Duration>()
    let gate = Gate()
    let load: Task<Void, Never> = $count.load(interrupts: [.milliseconds(20), .milliseconds(30)]) { yield in
      await gate.wait()
      yield(.loaded(1))
    } onInterrupt: { delay in
      loadDelays.record(delay)
    }
    let run: Task<Void, Never> = $save.run(interrupts: [.milliseconds(30), .milliseconds(20)]) {
      await gate.wait()
    } onInterrupt: { delay in
      runDelays.record(delay)
    }
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(20))  // the load's first interrupt
    try await loadDelays.wait(forCount: 1)
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(10))  // 30 ms: the run's first interrupt
    try await runDelays.wait(forCount: 1)
    try await clock.waitForSleepers(2)
    clock.advance(by: .milliseconds(20))  // 50 ms: both second interrupts
    try await loadDelays.wait(forCount: 2)
    try await runDelays.wait(forCount: 2)
    gate.open()
    await load.value
    await run.value
    #expect(loadDelays.values == [.milliseconds(20), .milliseconds(50)])
    #expect(runDelays.values == [.milliseconds(30), .milliseconds(50)])
    #expect(count == .loaded(1))
    #expect(save.hasFinished)
  }

  @Test func zeroAndNegativeDelaysFireAtOnceAndAddNothing() async throws {
    @Loadable var count: LoadableState<Int>
    let delays = StateRecorder<Duration>()
    let gate = Gate()
    let task: Task<Void, Never> = $count.load(interrupts: [.zero, .milliseconds(-5)]) {
      await gate.wait()
      return 1
    } onInterrupt: { delay in
      delays.record(delay)
    }
    try await delays.wait(forCount: 2)
    gate.open()
    await task.value
    #expect(delays.values == [.zero, .zero])
    #expect(count == .loaded(1))
  }

  @Test func zeroDelayAddsNothingBetweenPositiveOnes() async throws {
    let clock = TestClock()
    @Loadable(options: LoadOptions(clock: clock)) var count: LoadableState<Int>
    let delays = StateRecorder<Duration>()
    let gate = Gate()
    let task: Task<Void, Never> = $count.load(
      interrupts: [.milliseconds(10), .zero, .milliseconds(-20), .milliseconds(15)]
    ) {
      await gate.wait()
      return 1
    } onInterrupt: { delay in
      delays.record(delay)
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(10))
    try await delays.wait(forCount: 3)
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(15))
    try await delays.wait(forCount: 4)
    gate.open()
    await task.value
    #expect(delays.values == [.milliseconds(10), .milliseconds(10), .milliseconds(10), .milliseconds(25)])
  }

  @Test func emptyInterruptsMeanNone() async throws {
    let clock = TestClock()
    @Loadable(options: LoadOptions(clock: clock)) var count: LoadableState<Int>
    let delays = StateRecorder<Duration>()
    await $count.load(interrupts: []) {
      return 1
    } onInterrupt: { delay in
      delays.record(delay)
    }
    #expect(clock.sleeperCount == 0)  // no interrupt was ever waited for
    #expect(delays.values.isEmpty)
    #expect(count == .loaded(1))
  }

  @Test func interruptsStopWhenTheBlockFinishes() async throws {
    let clock = TestClock()
    @Loadable(options: LoadOptions(clock: clock)) var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let delays = StateRecorder<Duration>()
    let gate = Gate()
    // The first interrupt fires while the block waits; the block then ends, and the second must never fire.
    let task: Task<Void, Never> = $count.load(interrupts: [.milliseconds(10), .seconds(1)]) {
      await gate.wait()
      return 1
    } onInterrupt: { delay in
      delays.record(delay)
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(10))
    try await delays.wait(forCount: 1)
    try await clock.waitForSleepers(1)  // the second interrupt's sleep
    gate.open()
    await task.value
    #expect(clock.sleeperCount == 0)  // the interrupt task was cancelled with the block's end
    clock.advance(by: .seconds(10))
    #expect(delays.values == [.milliseconds(10)])
    #expect(recorder.values == [.loading, .loaded(1)])
  }

  @Test func interruptsNeverFireAfterAQuickBlock() async throws {
    let clock = TestClock()
    @Process(options: LoadOptions(clock: clock)) var save
    let delays = StateRecorder<Duration>()
    await $save.run(interrupts: [.milliseconds(40)]) {
    } onInterrupt: { delay in
      delays.record(delay)
    }
    #expect(clock.sleeperCount == 0)  // the interrupt stopped with the block
    clock.advance(by: .seconds(1))
    #expect(clock.sleeperCount == 0)
    #expect(delays.values.isEmpty)
    #expect(save.hasFinished)
  }

  // MARK: Outcomes

  @Test func timeoutFromOnInterruptEndsTheLoadWithAnError() async throws {
    let clock = TestClock()
    @Loadable(options: LoadOptions(clock: clock)) var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let gate = Gate()
    let task: Task<Void, Never> = $count.load(interrupts: [.milliseconds(10)]) {
      await gate.wait()
      return 1
    } onInterrupt: { _ in
      throw TimeoutError()
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(10))
    try await recorder.wait(forCount: 2)
    #expect(recorder.values == [.loading, .error(TimeoutError())])
    // The block ignores cancellation; its late result is not written.
    gate.open()
    await task.value
    #expect(recorder.values == [.loading, .error(TimeoutError())])
    #expect($count.storage.tracker.isRunning == false)
  }

  @Test func timeoutCancelsACooperativeBlock() async throws {
    let clock = TestClock()
    @Loadable(options: LoadOptions(clock: clock)) var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let sawCancellation = WrapperLatch<Bool>()
    let load = Task {
      await $count.load(interrupts: [.milliseconds(10)]) { yield in
        do {
          try await clock.sleep(for: .seconds(60))
          sawCancellation.fulfil(false)
        } catch {
          sawCancellation.fulfil(Task.isCancelled)
        }
        yield(.loaded(1))
      } onInterrupt: { _ in
        throw TimeoutError()
      }
    }
    try await clock.waitForSleepers(2)  // the block and the interrupt
    clock.advance(by: .milliseconds(10))
    await load.value
    #expect(await sawCancellation.value() == true)
    #expect(recorder.values == [.loading, .error(TimeoutError())])
  }

  @Test func timeoutFromOnInterruptFailsTheProcess() async throws {
    let clock = TestClock()
    @Process(options: LoadOptions(clock: clock)) var action: ProcessState<String>
    let recorder = StateRecorder($action)
    let gate = Gate()
    let task: Task<Void, Never> = $action.run("save", interrupts: [.milliseconds(10)]) {
      await gate.wait()
    } onInterrupt: { _ in
      throw TimeoutError()
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(10))
    try await recorder.wait(forCount: 2)
    gate.open()
    await task.value
    #expect(recorder.values == [.running("save"), .failed(process: "save", error: TimeoutError())])
  }

  @Test func timeoutAfterSeveralInterrupts() async throws {
    let clock = TestClock()
    @Loadable(options: LoadOptions(clock: clock)) var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let delays = StateRecorder<Duration>()
    let load = Task {
      await $count.load(interrupts: [.milliseconds(10), .milliseconds(10), .milliseconds(10)]) {
        try await clock.sleep(for: .seconds(60))
        return 1
      } onInterrupt: { delay in
        delays.record(delay)
        if delay == .milliseconds(20) { throw TimeoutError() }
      }
    }
    for _ in 1...2 {
      try await clock.waitForSleepers(2)  // the block and the next interrupt
      clock.advance(by: .milliseconds(10))
    }
    await load.value
    #expect(delays.values == [.milliseconds(10), .milliseconds(20)])
    #expect(recorder.values == [.loading, .error(TimeoutError())])
  }

  @Test func anyErrorFromOnInterruptIsWrittenLikeABlockError() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    await $count.load(interrupts: [.zero]) {
      _ = await WrapperProbe.sleepUntilCancelled()
      return 1
    } onInterrupt: { _ in
      throw WrapperError(code: 9)
    }
    #expect(recorder.values == [.loading, .error(WrapperError(code: 9))])
  }

  @Test func controlErrorsFromOnInterruptActAsCancelAndReset() async throws {
    @Loadable var count: LoadableState<Int> = .loaded(0)
    let recorder = StateRecorder($count)
    let gate = Gate()
    let cancelled: Task<Void, Never> = $count.load(interrupts: [.zero]) { yield in
      yield(.loaded(1))
      await gate.wait()
      yield(.loaded(2))
    } onInterrupt: { _ in
      throw CancelLoadable()
    }
    await until(.activity(of: $count)) { !$count.storage.tracker.isRunning }
    gate.open()
    await cancelled.value
    #expect(recorder.values == [.loading, .loaded(1)])

    let resetGate = Gate()
    let reset: Task<Void, Never> = $count.load(interrupts: [.zero]) {
      await resetGate.wait()
      return 3
    } onInterrupt: { _ in
      throw ResetLoadable()
    }
    try await recorder.wait(forCount: 4)
    resetGate.open()
    await reset.value
    #expect(recorder.values == [.loading, .loaded(1), .loading, .absent])
  }

  @Test func processControlErrorsFromOnInterruptWorkForLoadsAndProcesses() async {
    @Loadable var count: LoadableState<Int>
    @Process var action: ProcessState<String>
    let loadHistory = StateRecorder($count)
    let runHistory = StateRecorder($action)
    await $count.load(interrupts: [.zero]) {
      _ = await WrapperProbe.sleepUntilCancelled()
      return 1
    } onInterrupt: { _ in
      throw ResetProcess()
    }
    await $action.run("a", interrupts: [.zero]) {
      _ = await WrapperProbe.sleepUntilCancelled()
    } onInterrupt: { _ in
      throw CancelLoadable()
    }
    await $action.run("b", interrupts: [.zero]) {
      _ = await WrapperProbe.sleepUntilCancelled()
    } onInterrupt: { _ in
      throw ResetLoadable()
    }
    await $action.run("c", interrupts: [.zero]) {
      _ = await WrapperProbe.sleepUntilCancelled()
    } onInterrupt: { _ in
      throw CancelProcess()
    }
    #expect(loadHistory.values == [.loading, .absent])
    #expect(runHistory.values == [.running("a"), .running("b"), .idle, .running("c")])
  }

  // MARK: Interrupts that start a newer load

  @Test func onInterruptStartingANewerLoadThenReturningLeavesTheNewerLoadAlone() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let staleGate = Gate()
    let newerGate = Gate()
    var newer: Task<Void, Never>?
    let stale: Task<Void, Never> = $count.load(interrupts: [.zero]) {
      await staleGate.wait()
      return 1
    } onInterrupt: { _ in
      // A fallback: give up on this load and start another one.
      newer = $count.load {
        await newerGate.wait()
        return 2
      }
    }
    // `newer` is set before its block runs: the block's arrival at its gate wakes the wait.
    await until(.arrivals(at: newerGate)) { newer != nil }
    newerGate.open()
    await newer?.value
    staleGate.open()
    await stale.value
    #expect(recorder.values == [.loading, .loaded(2)])
  }

  /// `onInterrupt` starts a newer load (a fallback) and then throws to end the old one. The error belongs to the old
  /// load, which is no longer current, so it must not touch the newer load.
  @Test(arguments: [WrapperInterruptError.timeout, .cancel, .reset])
  fileprivate func onInterruptStartingANewerLoadThenThrowingLeavesTheNewerLoadAlone(
    _ error: WrapperInterruptError
  ) async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let staleGate = Gate()
    let newerGate = Gate()
    let newerSawCancellation = WrapperLatch<Bool>()
    var newer: Task<Void, Never>?
    let stale: Task<Void, Never> = $count.load(interrupts: [.zero]) {
      await staleGate.wait()
      return 1
    } onInterrupt: { _ in
      newer = $count.load {
        await newerGate.wait()
        newerSawCancellation.fulfil(Task.isCancelled)
        return 2
      }
      throw error.value
    }
    // `newer` is set before its block runs: the block's arrival at its gate wakes the wait.
    await until(.arrivals(at: newerGate)) { newer != nil }
    newerGate.open()
    await newer?.value
    staleGate.open()
    await stale.value
    #expect(await newerSawCancellation.value() == false, "the stale interrupt cancelled the newer load's task")
    #expect(recorder.values == [.loading, .loaded(2)])
  }

  @Test func onInterruptStartingANewerRunThenThrowingLeavesTheNewerRunAlone() async {
    @Process var action: ProcessState<String>
    let recorder = StateRecorder($action)
    let staleGate = Gate()
    let newerGate = Gate()
    var newer: Task<Void, Never>?
    let stale: Task<Void, Never> = $action.run("slow", interrupts: [.zero]) {
      await staleGate.wait()
    } onInterrupt: { _ in
      newer = $action.run("fallback") { await newerGate.wait() }
      throw TimeoutError()
    }
    // `newer` is set before its block runs: the block's arrival at its gate wakes the wait.
    await until(.arrivals(at: newerGate)) { newer != nil }
    newerGate.open()
    await newer?.value
    staleGate.open()
    await stale.value
    #expect(recorder.values == [.running("slow"), .running("fallback"), .finished("fallback")])
  }

  @Test func observerRetryingAfterATimeoutIsNotDisturbed() async throws {
    let clock = TestClock()
    @Loadable(options: LoadOptions(clock: clock)) var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let staleGate = Gate()
    var retry: Task<Void, Never>?
    let controller = $count
    let retrier = $count.observe { state in
      guard state == .error(TimeoutError()), retry == nil else { return }
      retry = controller.load {
        await Task.yield()
        return 2
      }
    }
    let first: Task<Void, Never> = $count.load(interrupts: [.milliseconds(10)]) {
      await staleGate.wait()
      return 1
    } onInterrupt: { _ in
      throw TimeoutError()
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(10))
    try await recorder.wait(forCount: 3)  // the timeout's error, then the retry's .loading, written by the observer
    await retry?.value
    staleGate.open()
    await first.value
    #expect(recorder.values == [.loading, .error(TimeoutError()), .loading, .loaded(2)])
    retrier.cancel()
  }

  // MARK: Writing from onInterrupt

  @Test func onInterruptMaySetAnotherPropertyWhileTheLoadGoesOn() async throws {
    let clock = TestClock()
    let model = SlowFeedModel()
    let recorder = StateRecorder(model.$feed)
    let gate = Gate()
    let interrupted = WrapperLatch<Void>()
    let task: Task<Void, Never> = model.$feed.load(
      options: LoadOptions(clock: clock), interrupts: [.milliseconds(10)]
    ) { [model] in
      await gate.wait()
      model.message = nil
      return ["fresh"]
    } onInterrupt: { [model] _ in
      model.message = "Taking longer than expected"
      interrupted.fulfil()
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(10))
    await interrupted.value()
    #expect(model.message == "Taking longer than expected")
    #expect(model.feed == .loading)
    gate.open()
    await task.value
    #expect(model.message == nil)
    #expect(recorder.values == [.loading, .loaded(["fresh"])])
  }

  @Test func onInterruptWritingTheStateItselfActsAsAManualWrite() async throws {
    let clock = TestClock()
    @Loadable(options: LoadOptions(clock: clock)) var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let gate = Gate()
    let sawCancellation = WrapperLatch<Bool>()
    let delays = StateRecorder<Duration>()
    let task: Task<Void, Never> = $count.load(interrupts: [.milliseconds(10), .milliseconds(10)]) {
      await gate.wait()
      sawCancellation.fulfil(Task.isCancelled)
      return 1
    } onInterrupt: { delay in
      delays.record(delay)
      count = .error(WrapperError(code: 408))
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(10))
    try await recorder.wait(forCount: 2)
    #expect(count == .error(WrapperError(code: 408)))
    gate.open()
    await task.value
    // The write cancelled the load: its result is not written and no further interrupt fires.
    #expect(await sawCancellation.value() == true)
    #expect(clock.sleeperCount == 0)  // the write cancelled the interrupts too
    clock.advance(by: .seconds(1))
    #expect(delays.values == [.milliseconds(10)])
    #expect(recorder.values == [.loading, .error(WrapperError(code: 408))])
  }

  // MARK: Forms

  @Test func asyncInterruptFormsReturnWhenTheLoadEnds() async {
    @Loadable var count: LoadableState<Int>
    @Process var action: ProcessState<String>
    await $count.load(interrupts: [.seconds(5)]) {
      1
    } onInterrupt: { _ in
      throw TimeoutError()
    }
    #expect(count == .loaded(1))
    await $count.load(interrupts: [.seconds(5)]) { yield in
      yield(.loaded(2))
    } onInterrupt: { _ in
    }
    #expect(count == .loaded(2))
    await $action.run("x", interrupts: [.seconds(5)]) {
    } onInterrupt: { _ in
      throw TimeoutError()
    }
    #expect(action == .finished("x"))
    #expect($count.storage.tracker.isRunning == false)
    #expect($action.storage.tracker.isRunning == false)
  }
}

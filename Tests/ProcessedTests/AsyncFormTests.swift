import ProcessedTesting
import Testing

@testable import Processed

/// A task-local value that the `async` forms must hand on to their blocks.
private enum RequestContext {
  @TaskLocal static var requestID: String?
}

/// B8: the `async` forms (`await $x.load { … }`, `await $x.run { … }`) are tracked like the Task forms — `cancel()`,
/// `reset()`, a newer load and cancelling the caller's task stop them — and their blocks inherit the caller's
/// task-local values and priority.
@MainActor
@Suite struct AsyncFormTests {
  // MARK: Stopping an awaited load

  @Test func cancelStopsAnAwaitedLoad() async {
    let count = Loadable<Int>()
    let recorder = StateRecorder(count.projectedValue)
    let started = WrapperLatch<Void>()
    let sawCancellation = WrapperLatch<Bool>()
    let caller = Task {
      await count.projectedValue.load {
        started.fulfil()
        sawCancellation.fulfil(await WrapperProbe.sleepUntilCancelled())
        return 1
      }
    }
    await started.value()
    count.projectedValue.cancel()
    await caller.value
    #expect(await sawCancellation.value() == true)
    #expect(recorder.values == [.loading])
    #expect(count.projectedValue.storage.tracker.isRunning == false)
  }

  @Test func resetStopsAnAwaitedLoad() async {
    let count = Loadable<Int>()
    let recorder = StateRecorder(count.projectedValue)
    let started = WrapperLatch<Void>()
    let sawCancellation = WrapperLatch<Bool>()
    let caller = Task {
      await count.projectedValue.load { yield in
        started.fulfil()
        sawCancellation.fulfil(await WrapperProbe.sleepUntilCancelled())
        yield(.loaded(1))
      }
    }
    await started.value()
    count.projectedValue.reset()
    await caller.value
    #expect(await sawCancellation.value() == true)
    #expect(recorder.values == [.loading, .absent])
  }

  @Test func newerLoadStopsAnAwaitedLoad() async {
    let count = Loadable<Int>()
    let recorder = StateRecorder(count.projectedValue)
    let started = WrapperLatch<Void>()
    let sawCancellation = WrapperLatch<Bool>()
    let caller = Task {
      await count.projectedValue.load {
        started.fulfil()
        sawCancellation.fulfil(await WrapperProbe.sleepUntilCancelled())
        return 1
      }
    }
    await started.value()
    let newer: Task<Void, Never> = count.projectedValue.load { 2 }
    await caller.value
    await newer.value
    #expect(await sawCancellation.value() == true)
    #expect(recorder.values == [.loading, .loaded(2)])
  }

  @Test func cancellingTheCallersTaskStopsAnAwaitedLoad() async {
    let count = Loadable<Int>()
    let recorder = StateRecorder(count.projectedValue)
    let started = WrapperLatch<Void>()
    let sawCancellation = WrapperLatch<Bool>()
    let caller = Task {
      await count.projectedValue.load {
        started.fulfil()
        sawCancellation.fulfil(await WrapperProbe.sleepUntilCancelled())
        return 1
      }
    }
    await started.value()
    caller.cancel()
    await caller.value
    #expect(await sawCancellation.value() == true)
    #expect(recorder.values == [.loading])
    #expect(count.projectedValue.storage.tracker.isRunning == false)
  }

  @Test func manualWriteStopsAnAwaitedLoad() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let started = WrapperLatch<Void>()
    let controller = $count
    let caller = Task {
      await controller.load {
        started.fulfil()
        _ = await WrapperProbe.sleepUntilCancelled()
        return 1
      }
    }
    await started.value()
    count = .loaded(9)
    await caller.value
    #expect(recorder.values == [.loading, .loaded(9)])
  }

  // MARK: Untracked async loads (a defect of the original package), with blocks that ignore cancellation

  @Test func cancelReachesAnAwaitedLoadThatIgnoresCancellation() async {
    let count = Loadable<Int>()
    let recorder = StateRecorder(count.projectedValue)
    let gate = Gate()
    let caller = Task {
      await count.projectedValue.load {
        await gate.wait()
        return 1
      }
    }
    await gate.untilWaiting(1)
    count.projectedValue.cancel()
    gate.open()
    await caller.value
    #expect(recorder.values == [.loading])
  }

  @Test func newerLoadSupersedesAnAwaitedLoadThatIgnoresCancellation() async {
    let count = Loadable<Int>()
    let recorder = StateRecorder(count.projectedValue)
    let gate = Gate()
    let caller = Task {
      await count.projectedValue.load { yield in
        await gate.wait()
        yield(.loaded(1))
        throw ResetLoadable()
      }
    }
    await gate.untilWaiting(1)
    await count.projectedValue.load { 2 }
    gate.open()
    await caller.value
    #expect(recorder.values == [.loading, .loaded(2)])
  }

  @Test func cancellingTheCallerReachesAnAwaitedLoadThatIgnoresCancellation() async {
    let count = Loadable<Int>()
    let recorder = StateRecorder(count.projectedValue)
    let gate = Gate()
    let caller = Task {
      await count.projectedValue.load { () async throws -> Int in
        await gate.wait()
        throw WrapperError(code: 1)
      }
    }
    await gate.untilWaiting(1)
    caller.cancel()
    gate.open()
    await caller.value
    #expect(recorder.values == [.loading])
  }

  @Test func awaitedLoadIsTheCurrentLoadWhileItRuns() async {
    let count = Loadable<Int>()
    let gate = Gate()
    let caller = Task {
      await count.projectedValue.load {
        await gate.wait()
        return 1
      }
    }
    await gate.untilWaiting(1)
    #expect(count.projectedValue.storage.tracker.isRunning)
    gate.open()
    await caller.value
    #expect(count.projectedValue.storage.tracker.isRunning == false)
    #expect(count.wrappedValue == .loaded(1))
  }

  // MARK: Processes

  @Test func cancelAndResetStopAnAwaitedRun() async {
    let action = Process<String>()
    let recorder = StateRecorder(action.projectedValue)
    let gate = Gate()
    let first = Task {
      await action.projectedValue.run("first") { await gate.wait() }
    }
    await gate.untilWaiting(1)
    action.projectedValue.cancel()
    let secondStarted = WrapperLatch<Void>()
    let second = Task {
      await action.projectedValue.run("second") {
        secondStarted.fulfil()
        _ = await WrapperProbe.sleepUntilCancelled()
      }
    }
    await secondStarted.value()
    action.projectedValue.reset()
    await second.value
    gate.open()
    await first.value
    #expect(recorder.values == [.running("first"), .running("second"), .idle])
  }

  @Test func newerRunStopsAnAwaitedSingleProcessRun() async {
    let save = Process()
    let recorder = StateRecorder(save.projectedValue)
    let gate = Gate()
    let caller = Task {
      await save.projectedValue.run { await gate.wait() }
    }
    await gate.untilWaiting(1)
    let newer = SingleProcess(id: "newer")
    await save.projectedValue.run(newer) {}
    gate.open()
    await caller.value
    #expect(recorder.values.count == 3)
    #expect(recorder.values.first?.isRunning == true)
    #expect(recorder.values.dropFirst() == [.running(newer), .finished(newer)])
  }

  // MARK: Inheritance

  @Test func asyncLoadBlockInheritsTaskLocals() async {
    @Loadable var id: LoadableState<String>
    @Process var save
    var seenByRun: String?
    await RequestContext.$requestID.withValue("request-42") {
      await $id.load { RequestContext.requestID ?? "none" }
      await $save.run { seenByRun = RequestContext.requestID }
    }
    #expect(id == .loaded("request-42"))
    #expect(seenByRun == "request-42")
  }

  @Test func asyncYieldingAndInterruptFormsInheritTaskLocals() async {
    @Loadable var id: LoadableState<String>
    var seenByInterrupt: String?
    await RequestContext.$requestID.withValue("yielding") {
      await $id.load { yield in yield(.loaded(RequestContext.requestID ?? "none")) }
    }
    #expect(id == .loaded("yielding"))
    await RequestContext.$requestID.withValue("interrupted") {
      await $id.load(interrupts: [.zero]) {
        _ = await WrapperProbe.sleepUntilCancelled(limit: .milliseconds(200))
        return RequestContext.requestID ?? "none"
      } onInterrupt: { _ in
        seenByInterrupt = RequestContext.requestID
      }
    }
    #expect(id == .loaded("interrupted"))
    #expect(seenByInterrupt == "interrupted")
  }

  @Test func asyncLoadBlockInheritsTheCallersPriority() async {
    let count = Loadable<Int>()
    let caller = Task(priority: .low) {
      var seen: TaskPriority?
      await count.projectedValue.load {
        seen = Task.basePriority
        return 1
      }
      return (seen, Task.basePriority)
    }
    let (seen, callers) = await caller.value
    #expect(seen == callers)
    #expect(seen == .low)
  }
}

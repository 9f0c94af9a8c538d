import ProcessedTesting
import Testing

@testable import Processed

/// How a running load stops being the current one.
private enum Supersession: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case newerLoad, cancel, reset, manualWrite, taskCancel

  var testDescription: String { rawValue }
}

/// What a stale (non-cooperative) load's block does once it resumes after it was superseded.
private enum StaleAction: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case returnValue, yieldValues, throwError, throwCancelLoadable, throwResetLoadable, throwCancelProcess
  case throwResetProcess

  var testDescription: String { rawValue }
}

/// The process kinds used by the process matrix.
private enum Job: Equatable, Sendable {
  case first, second, manual
}

/// What a stale run's block does once it resumes.
private enum StaleRunAction: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case finish, fail, throwCancelProcess, throwResetProcess, throwResetLoadable

  var testDescription: String { rawValue }
}

/// Starts a load whose block waits for `gate` (ignoring cancellation) and then does `action`.
@MainActor
private func startStaleLoad(_ action: StaleAction, on numbers: Loadable<Int>, gate: Gate) -> Task<Void, Never> {
  let controller = numbers.projectedValue
  switch action {
  case .returnValue:
    return controller.load {
      await gate.wait()
      return 1
    }
  case .yieldValues:
    return controller.load { yield in
      await gate.wait()
      yield(.loaded(1))
      yield(.absent)
    }
  case .throwError:
    return controller.load { () async throws -> Int in
      await gate.wait()
      throw WrapperError(code: 1)
    }
  case .throwCancelLoadable:
    return controller.load { () async throws -> Int in
      await gate.wait()
      throw CancelLoadable()
    }
  case .throwResetLoadable:
    return controller.load { () async throws -> Int in
      await gate.wait()
      throw ResetLoadable()
    }
  case .throwCancelProcess:
    return controller.load { () async throws -> Int in
      await gate.wait()
      throw CancelProcess()
    }
  case .throwResetProcess:
    return controller.load { () async throws -> Int in
      await gate.wait()
      throw ResetProcess()
    }
  }
}

/// Supersedes the running load of `numbers` (whose task is `stale`) and returns the newer load's task, if the way
/// of superseding starts one. A newer load waits for `newerGate` and returns 2.
@MainActor
private func supersede(
  _ numbers: Loadable<Int>, by supersession: Supersession, stale: Task<Void, Never>, newerGate: Gate
) -> Task<Void, Never>? {
  switch supersession {
  case .newerLoad: return startNewerLoad(on: numbers, gate: newerGate)
  case .cancel: numbers.projectedValue.cancel()
  case .reset: numbers.projectedValue.reset()
  case .manualWrite: numbers.wrappedValue = .loaded(5)
  case .taskCancel: stale.cancel()
  }
  return nil
}

/// Starts a load that waits for `gate` (ignoring cancellation) and returns 2.
@MainActor
private func startNewerLoad(on numbers: Loadable<Int>, gate: Gate) -> Task<Void, Never> {
  numbers.projectedValue.load {
    await gate.wait()
    return 2
  }
}

/// The history right after superseding a load that wrote only `.loading`.
private func historyAfter(_ supersession: Supersession) -> [LoadableState<Int>] {
  switch supersession {
  case .newerLoad, .cancel, .taskCancel: [.loading]
  case .reset: [.loading, .absent]
  case .manualWrite: [.loading, .loaded(5)]
  }
}

/// B6 latest wins and B7 isolation, always with blocks that ignore cancellation (they wait on a ``Gate``).
@MainActor
@Suite struct LatestWinsTests {
  // MARK: B6 — the matrix

  @Test(arguments: Supersession.allCases, StaleAction.allCases)
  fileprivate func supersededLoadNeverWritesAgain(_ supersession: Supersession, _ action: StaleAction) async {
    let numbers = Loadable<Int>()
    let recorder = StateRecorder(numbers.projectedValue)
    let gate = Gate()
    let newerGate = Gate()
    let stale = startStaleLoad(action, on: numbers, gate: gate)
    await gate.untilWaiting(1)
    let newer = supersede(numbers, by: supersession, stale: stale, newerGate: newerGate)
    let expected = historyAfter(supersession)
    #expect(recorder.values == expected)

    gate.open()
    await stale.value
    #expect(recorder.values == expected, "the stale load wrote after it was superseded")

    if let newer {
      // The stale load's end (even a control error) did not touch the newer load.
      #expect(numbers.projectedValue.storage.tracker.isRunning)
      newerGate.open()
      await newer.value
      #expect(recorder.values == expected + [.loaded(2)])
    } else {
      #expect(numbers.projectedValue.storage.tracker.isRunning == false)
    }
  }

  @Test(arguments: Supersession.allCases, StaleAction.allCases)
  fileprivate func staleLoadEndingDoesNotDisturbALaterLoad(_ supersession: Supersession, _ action: StaleAction) async {
    let numbers = Loadable<Int>()
    let recorder = StateRecorder(numbers.projectedValue)
    let gate = Gate()
    let newerGate = Gate()
    let stale = startStaleLoad(action, on: numbers, gate: gate)
    await gate.untilWaiting(1)
    let newer =
      supersede(numbers, by: supersession, stale: stale, newerGate: newerGate)
      ?? startNewerLoad(on: numbers, gate: newerGate)
    var expected = historyAfter(supersession)
    if expected.last != .loading { expected.append(.loading) }
    #expect(recorder.values == expected)

    gate.open()
    await stale.value
    #expect(recorder.values == expected, "the stale load wrote after it was superseded")
    #expect(numbers.projectedValue.storage.tracker.isRunning, "the stale load ended the newer load's bookkeeping")

    newerGate.open()
    await newer.value
    #expect(recorder.values == expected + [.loaded(2)])
    #expect(numbers.projectedValue.storage.tracker.isRunning == false)
  }

  @Test(arguments: StaleAction.allCases)
  fileprivate func cancelReachesTheCurrentLoadAfterAStaleOneEnded(_ action: StaleAction) async {
    let numbers = Loadable<Int>()
    let recorder = StateRecorder(numbers.projectedValue)
    let gate = Gate()
    let newerGate = Gate()
    let stale = startStaleLoad(action, on: numbers, gate: gate)
    let newer = startNewerLoad(on: numbers, gate: newerGate)
    await gate.untilWaiting(1)
    await newerGate.untilWaiting(1)
    gate.open()
    await stale.value
    numbers.projectedValue.cancel()
    newerGate.open()
    await newer.value
    #expect(recorder.values == [.loading], "cancel() did not reach the current load")
  }

  @Test(arguments: Supersession.allCases)
  fileprivate func supersededLoadsInterruptNeverFires(_ supersession: Supersession) async {
    let clock = TestClock()
    let numbers = Loadable<Int>(options: LoadOptions(clock: clock))
    let recorder = StateRecorder(numbers.projectedValue)
    let interrupts = StateRecorder<Duration>()
    let gate = Gate()
    let newerGate = Gate()
    let stale: Task<Void, Never> = numbers.projectedValue.load(interrupts: [.milliseconds(60)]) {
      await gate.wait()
      return 1
    } onInterrupt: { delay in
      interrupts.record(delay)
      throw TimeoutError()
    }
    // Superseded before the main actor is given up, so long before the interrupt is due.
    let newer = supersede(numbers, by: supersession, stale: stale, newerGate: newerGate)
    let expected = historyAfter(supersession)
    #expect(recorder.values == expected)
    gate.open()
    await stale.value
    // The stale load's interrupt timer is gone: moving time past its delay wakes nobody.
    #expect(clock.sleeperCount == 0)
    clock.advance(by: .seconds(1))
    #expect(interrupts.values.isEmpty)
    newerGate.open()
    await newer?.value
    #expect(interrupts.values.isEmpty)
    #expect(recorder.values == expected + (newer == nil ? [] : [.loaded(2)]))
  }

  @Test(arguments: Supersession.allCases)
  fileprivate func supersededLoadsImmediateInterruptNeverFires(_ supersession: Supersession) async {
    let numbers = Loadable<Int>()
    let recorder = StateRecorder(numbers.projectedValue)
    let interrupts = StateRecorder<Duration>()
    let gate = Gate()
    let newerGate = Gate()
    let stale: Task<Void, Never> = numbers.projectedValue.load(interrupts: [.zero, .zero]) { yield in
      await gate.wait()
      yield(.loaded(1))
    } onInterrupt: { delay in
      interrupts.record(delay)
      throw ResetLoadable()
    }
    // Superseded before its task even started: the zero-delay interrupts must not fire for it.
    let newer = supersede(numbers, by: supersession, stale: stale, newerGate: newerGate)
    let expected = historyAfter(supersession)
    gate.open()
    await stale.value
    newerGate.open()
    await newer?.value
    #expect(interrupts.values.isEmpty)
    #expect(recorder.values == expected + (newer == nil ? [] : [.loaded(2)]))
  }

  // MARK: B6 — processes

  @Test(arguments: Supersession.allCases, StaleRunAction.allCases)
  fileprivate func supersededRunNeverWritesAgain(_ supersession: Supersession, _ action: StaleRunAction) async {
    let job = Process<Job>()
    let recorder = StateRecorder(job.projectedValue)
    let gate = Gate()
    let newerGate = Gate()
    let stale: Task<Void, Never> = job.projectedValue.run(.first) {
      await gate.wait()
      switch action {
      case .finish: return
      case .fail: throw WrapperError(code: 1)
      case .throwCancelProcess: throw CancelProcess()
      case .throwResetProcess: throw ResetProcess()
      case .throwResetLoadable: throw ResetLoadable()
      }
    }
    await gate.untilWaiting(1)
    var newer: Task<Void, Never>?
    var expected: [ProcessState<Job>] = [.running(.first)]
    switch supersession {
    case .newerLoad:
      newer = job.projectedValue.run(.second) { await newerGate.wait() }
      expected.append(.running(.second))
    case .cancel: job.projectedValue.cancel()
    case .reset:
      job.projectedValue.reset()
      expected.append(.idle)
    case .manualWrite:
      job.wrappedValue = .finished(.manual)
      expected.append(.finished(.manual))
    case .taskCancel: stale.cancel()
    }
    #expect(recorder.values == expected)
    gate.open()
    await stale.value
    #expect(recorder.values == expected, "the stale run wrote after it was superseded")
    if let newer {
      newerGate.open()
      await newer.value
      expected.append(.finished(.second))
    }
    #expect(recorder.values == expected)
  }

  // MARK: Defects of the original package

  @Test func staleResultIsNeverWritten() async {
    @Loadable var numbers: LoadableState<[Int]>
    let recorder = StateRecorder($numbers)
    let gate = Gate()
    let stale: Task<Void, Never> = $numbers.load {
      await gate.wait()
      return [1]
    }
    await $numbers.load { [2] }
    gate.open()
    await stale.value
    #expect(recorder.values == [.loading, .loaded([2])])
    #expect(numbers == .loaded([2]))
  }

  @Test func staleErrorIsNeverWritten() async {
    @Loadable var numbers: LoadableState<[Int]>
    let recorder = StateRecorder($numbers)
    let gate = Gate()
    let stale: Task<Void, Never> = $numbers.load { () async throws -> [Int] in
      await gate.wait()
      throw WrapperError(code: 1)
    }
    await $numbers.load { [2] }
    gate.open()
    await stale.value
    #expect(recorder.values == [.loading, .loaded([2])])
  }

  @Test func staleResetDoesNotResetTheNewerLoadsState() async {
    @Loadable var numbers: LoadableState<[Int]>
    let recorder = StateRecorder($numbers)
    let gate = Gate()
    let stale: Task<Void, Never> = $numbers.load { () async throws -> [Int] in
      await gate.wait()
      throw ResetLoadable()
    }
    await $numbers.load { [2] }
    gate.open()
    await stale.value
    #expect(recorder.values == [.loading, .loaded([2])])
    #expect(numbers == .loaded([2]))
  }

  @Test func staleCancelDoesNotCancelTheNewerLoad() async {
    @Loadable var numbers: LoadableState<[Int]>
    let recorder = StateRecorder($numbers)
    let gate = Gate()
    let newerGate = Gate()
    let stale: Task<Void, Never> = $numbers.load { () async throws -> [Int] in
      await gate.wait()
      throw CancelLoadable()
    }
    let newer: Task<Void, Never> = $numbers.load {
      await newerGate.wait()
      return [2]
    }
    gate.open()
    await stale.value
    newerGate.open()
    await newer.value
    #expect(recorder.values == [.loading, .loaded([2])])
  }

  @Test func cancelReachesTheCurrentLoadAfterAStaleOneFinished() async {
    @Loadable var numbers: LoadableState<[Int]>
    let recorder = StateRecorder($numbers)
    let staleGate = Gate()
    let newerGate = Gate()
    let stale: Task<Void, Never> = $numbers.load {
      await staleGate.wait()
      return [1]
    }
    let newer: Task<Void, Never> = $numbers.load {
      await newerGate.wait()
      return [2]
    }
    staleGate.open()
    await stale.value
    $numbers.cancel()
    newerGate.open()
    await newer.value
    #expect(recorder.values == [.loading])
    #expect(numbers == .loading)
  }

  @Test func resetReachesTheCurrentRunAfterAStaleOneFinished() async {
    @Process var save
    let recorder = StateRecorder($save)
    let staleGate = Gate()
    let newerGate = Gate()
    let first = SingleProcess(id: "first")
    let second = SingleProcess(id: "second")
    let stale: Task<Void, Never> = $save.run(first) { await staleGate.wait() }
    let newer: Task<Void, Never> = $save.run(second) { await newerGate.wait() }
    staleGate.open()
    await stale.value
    $save.reset()
    newerGate.open()
    await newer.value
    #expect(recorder.values == [.running(first), .running(second), .idle])
  }

  @Test func observerRestartingTheLoadFromItsResultIsNotDisturbed() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let controller = $count
    var restarted: Task<Void, Never>?
    let restartedGate = Gate()
    let restarter = $count.observe { state in
      guard state == .error(WrapperError(code: 1)), restarted == nil else { return }
      restarted = controller.load {
        await restartedGate.wait()
        return 2
      }
    }
    await $count.load { () async throws -> Int in throw WrapperError(code: 1) }
    #expect(restarted != nil)
    #expect(
      $count.storage.tracker.isRunning, "the ending load cleared the bookkeeping of the load its observer started")
    restartedGate.open()
    await restarted?.value
    #expect(recorder.values == [.loading, .error(WrapperError(code: 1)), .loading, .loaded(2)])
    restarter.cancel()
  }

  @Test func observerCancellingFromTheLoadingWriteStopsTheNewLoad() async {
    @Loadable var count: LoadableState<Int>
    let recorder = StateRecorder($count)
    let controller = $count
    let canceller = $count.observe { state in
      if state == .loading { controller.cancel() }
    }
    let gate = Gate()
    let task: Task<Void, Never> = $count.load {
      await gate.wait()
      return 1
    }
    gate.open()
    await task.value
    #expect(recorder.values == [.loading])
    canceller.cancel()
  }

  // MARK: B7 isolation

  @Test func twoWrappersLoadingAtOnceDoNotTouchEachOther() async {
    @Loadable var left: LoadableState<Int>
    @Loadable var right: LoadableState<Int>
    let leftHistory = StateRecorder($left)
    let rightHistory = StateRecorder($right)
    let leftGate = Gate()
    let rightGate = Gate()
    let leftTask: Task<Void, Never> = $left.load {
      await leftGate.wait()
      return 1
    }
    let rightTask: Task<Void, Never> = $right.load {
      await rightGate.wait()
      return 2
    }
    $left.cancel()
    #expect(right == .loading)
    rightGate.open()
    await rightTask.value
    leftGate.open()
    await leftTask.value
    #expect(leftHistory.values == [.loading])
    #expect(rightHistory.values == [.loading, .loaded(2)])

    // A reset of one and a newer load of the other stay apart too.
    let rightAgain: Task<Void, Never> = $right.load { 3 }
    $left.reset()
    await rightAgain.value
    #expect(leftHistory.values == [.loading, .absent])
    #expect(rightHistory.values == [.loading, .loaded(2), .loading, .loaded(3)])
  }

  @Test func twoInstancesOfOneModelDoNotTouchEachOther() async {
    let first = IsolationModel()
    let second = IsolationModel()
    let firstHistory = StateRecorder(first.$value)
    let secondHistory = StateRecorder(second.$value)
    let gate = Gate()
    let firstTask: Task<Void, Never> = first.$value.load {
      await gate.wait()
      return 1
    }
    let secondTask: Task<Void, Never> = second.$value.load {
      await gate.wait()
      return 2
    }
    await gate.untilWaiting(2)
    second.$value.reset()
    first.$progress.cancel()
    gate.open()
    await firstTask.value
    await secondTask.value
    #expect(firstHistory.values == [.loading, .loaded(1)])
    #expect(secondHistory.values == [.loading, .absent])
  }

  @Test func twoPropertiesOfOneModelDoNotTouchEachOther() async {
    let model = IsolationModel()
    let valueHistory = StateRecorder(model.$value)
    let progressHistory = StateRecorder(model.$progress)
    let gate = Gate()
    let valueTask: Task<Void, Never> = model.$value.load {
      await gate.wait()
      return 1
    }
    let progressTask: Task<Void, Never> = model.$progress.run(.first) { await gate.wait() }
    model.$progress.cancel()
    gate.open()
    await valueTask.value
    await progressTask.value
    #expect(valueHistory.values == [.loading, .loaded(1)])
    #expect(progressHistory.values == [.running(.first)])
  }
}

/// A model with two wrapped properties, for the isolation tests.
@MainActor
private final class IsolationModel {
  @Loadable var value: LoadableState<Int>
  @Process var progress: ProcessState<Job>
}

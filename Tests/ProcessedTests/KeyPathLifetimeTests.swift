import Testing

@testable import Processed

/// B10 for the key-path forms: hosts are registered (`RunningKeyPathHosts.runningKeys`) only while a load runs, and nothing the library
/// keeps holds a model once its loads end.
///
/// Tests run in parallel and share the table, so each test counts the entries of its own instances.
@MainActor
@Suite struct KeyPathLifetimeTests {
  @Test func modelIsFreedAfterAnAwaitedLoad() async {
    weak var weakModel: KeyPathVM?
    do {
      let model = KeyPathVM()
      weakModel = model
      let token = model.observe(\.numbers) { _ in }
      await model.load(\.numbers) { [1] }
      await model.run(\.action, as: .save) {}
      #expect(model.numbers == .loaded([1]))
      #expect(keyPathHostCount(of: model) == 0)
      _ = token
    }
    #expect(weakModel == nil)
  }

  @Test func modelIsFreedAfterTaskFormLoadsWhoseBlocksCaptureIt() async {
    weak var weakModel: KeyPathVM?
    let task: Task<Void, Never>
    do {
      let model = KeyPathVM()
      weakModel = model
      model.refresh()  // `load(\.numbers) { try await fetch() }`: the block captures the model
      task = model.load(\.other) { model.source.count }
      await task.value
      await until(.changes(of: model, \.numbers)) { model.numbers.isLoaded }
      #expect(model.numbers == .loaded([1, 2, 3]))
      #expect(model.other == .loaded(3))
    }
    // Holding the finished task's handle does not keep the model either.
    #expect(weakModel == nil)
    _ = task
  }

  @Test func modelStaysAliveWhileItsLoadRunsAndIsFreedWhenItEnds() async {
    weak var weakModel: KeyPathVM?
    let gate = Gate()
    let task: Task<Void, Never>
    do {
      let model = KeyPathVM()
      weakModel = model
      // The block does not capture the model: only the library's bookkeeping could keep it alive.
      task = model.load(\.numbers) {
        await gate.wait()
        return [1]
      }
    }
    await gate.untilWaiting(1)
    #expect(weakModel != nil)
    #expect(weakModel?.numbers == .loading)
    gate.open()
    await task.value
    #expect(weakModel == nil)
  }

  @Test func cancelReleasesTheModelWhileTheBlockStillRuns() async {
    weak var weakModel: KeyPathVM?
    let gate = Gate()
    var tasks: [Task<Void, Never>] = []
    do {
      let model = KeyPathVM()
      weakModel = model
      tasks.append(
        model.load(\.numbers) {
          await gate.wait()
          return [1]
        })
      tasks.append(
        model.load(\.other) {
          await gate.wait()
          return 1
        })
      tasks.append(model.run(\.action, as: .save) { await gate.wait() })
      tasks.append(model.run(\.upload) { await gate.wait() })
      await gate.untilWaiting(4)
      #expect(keyPathHostCount(of: model) == 4)
      model.cancel(\.numbers)
      model.reset(\.other)
      model.cancel(\.action)
      model.reset(\.upload)
      #expect(keyPathHostCount(of: model) == 0)
    }
    // The blocks are still suspended (they ignore cancellation), but nothing keeps the model.
    #expect(gate.waiting == 4)
    #expect(weakModel == nil)
    gate.open()
    for task in tasks { await task.value }
  }

  @Test func tableHoldsOneEntryPerRunningInstanceAndKeyPath() async {
    let first = KeyPathVM()
    let second = KeyPathVM()
    let gates = (0..<4).map { _ in Gate() }
    let firstNumbers: Task<Void, Never> = first.load(\.numbers) {
      await gates[0].wait()
      return [1]
    }
    let firstOther: Task<Void, Never> = first.load(\.other) {
      await gates[1].wait()
      return 1
    }
    let secondNumbers: Task<Void, Never> = second.load(\.numbers) {
      await gates[2].wait()
      return [2]
    }
    for gate in gates.prefix(3) { await gate.untilWaiting(1) }
    #expect(keyPathHostCount(of: first) == 2)
    #expect(keyPathHostCount(of: second) == 1)
    #expect(keyPathHostIsRunning(first, \KeyPathVM.numbers))
    #expect(keyPathHostIsRunning(first, \KeyPathVM.other))
    #expect(keyPathHostIsRunning(second, \KeyPathVM.numbers))
    #expect(!keyPathHostIsRunning(second, \KeyPathVM.other))

    // A newer load of a running state reuses its entry.
    let host = RunningKeyPathHosts.runningHost(for: KeyPathHostKey(first, \KeyPathVM.numbers))
    let newerNumbers: Task<Void, Never> = first.load(\.numbers) {
      await gates[3].wait()
      return [3]
    }
    #expect(keyPathHostCount(of: first) == 2)
    #expect(RunningKeyPathHosts.runningHost(for: KeyPathHostKey(first, \KeyPathVM.numbers)) === host)

    // The superseded load ending does not remove the newer load's entry.
    gates[0].open()
    await firstNumbers.value
    #expect(keyPathHostIsRunning(first, \KeyPathVM.numbers))
    gates[1].open()
    await firstOther.value
    #expect(keyPathHostCount(of: first) == 1)
    gates[3].open()
    await newerNumbers.value
    #expect(keyPathHostCount(of: first) == 0)
    #expect(keyPathHostCount(of: second) == 1)
    gates[2].open()
    await secondNumbers.value
    #expect(keyPathHostCount(of: second) == 0)
    #expect(first.numbers == .loaded([3]))
    #expect(second.numbers == .loaded([2]))
  }

  @Test func everyWayALoadEndsEmptiesItsEntry() async {
    let model = KeyPathVM()
    await model.load(\.numbers) { [1] }
    #expect(keyPathHostCount(of: model) == 0)
    await model.load(\.numbers) { throw KeyPathTestError.boom }
    #expect(keyPathHostCount(of: model) == 0)
    await model.load(\.numbers) { yield in yield(.loaded([1])) }
    #expect(keyPathHostCount(of: model) == 0)
    await model.load(\.numbers) { throw CancelLoadable() }
    #expect(keyPathHostCount(of: model) == 0)
    await model.load(\.numbers) { throw ResetLoadable() }
    #expect(keyPathHostCount(of: model) == 0)
    await model.load(\.numbers) { throw CancellationError() }
    #expect(keyPathHostCount(of: model) == 0)
    await model.load(\.numbers, interrupts: [.zero]) {
      await untilCancelled()
      return [1]
    } onInterrupt: { _ in
      throw TimeoutError()
    }
    #expect(keyPathHostCount(of: model) == 0)
    await model.run(\.action, as: .save) { throw KeyPathTestError.boom }
    await model.run(\.upload) {}
    #expect(keyPathHostCount(of: model) == 0)
    model.reset(\.numbers)
    model.reset(\.action)
    model.cancel(\.other)
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func cancellingTheReturnedTaskEmptiesTheEntryWhenTheBlockEnds() async {
    let model = KeyPathVM()
    let gate = Gate()
    let task: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      return [1]
    }
    await gate.untilWaiting(1)
    task.cancel()
    gate.open()
    await task.value
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func observationTokenDoesNotKeepTheModel() async {
    weak var weakModel: KeyPathVM?
    let calls = KeyPathBox(0)
    let token: ObservationToken
    do {
      let model = KeyPathVM()
      weakModel = model
      token = model.observe(\.numbers) { _ in calls.value += 1 }
      await model.load(\.numbers) { [1] }
    }
    #expect(weakModel == nil)
    #expect(calls.value == 2)
    token.cancel()
  }

  /// 100 000 short-lived view models, each loading once: afterwards every model is freed and none of them has an
  /// entry in the table. (About 3.5 s in a debug build; under the thread sanitizer, which makes the same loop about
  /// four times slower, 20 000 models keep the run short.)
  @Test func manyShortLivedModelsLeaveNothingBehind() async {
    let count = keyPathThreadSanitizerIsActive ? 20_000 : 100_000
    let before = KeyPathStressVM.deinits.value
    var loaded = 0
    for _ in 0..<count {
      let model = KeyPathStressVM()
      await model.load(\.numbers) { [1] }
      if model.numbers == .loaded([1]) { loaded += 1 }
    }
    #expect(loaded == count)
    #expect(KeyPathStressVM.deinits.value - before == count)
    #expect(keyPathHostCount(rootType: KeyPathStressVM.self) == 0)
  }

  /// The same with observed models (20 000, or 5 000 under the thread sanitizer): the registry, its slot and the
  /// observer's token keep nothing alive either.
  @Test func manyShortLivedObservedModelsLeaveNothingBehind() async {
    let count = keyPathThreadSanitizerIsActive ? 5_000 : 20_000
    let before = KeyPathObservableStressVM.deinits.value
    var notifications = 0
    for _ in 0..<count {
      let model = KeyPathObservableStressVM()
      let token = model.observe(\.numbers) { _ in notifications += 1 }
      await model.load(\.numbers) { [1] }
      token.cancel()
    }
    #expect(notifications == 2 * count)
    #expect(KeyPathObservableStressVM.deinits.value - before == count)
    #expect(keyPathHostCount(rootType: KeyPathObservableStressVM.self) == 0)
  }
}

import ProcessedTesting
import Testing

@testable import Processed

/// A model that holds wrapped states and whose loads capture it strongly (through `self`).
@MainActor
private final class FeedModel {
  @Loadable var items: LoadableState<[Int]>
  @Process var save
  var source = [1, 2, 3]
  var interruptCount = 0

  func refresh() -> Task<Void, Never> {
    $items.load { self.source }
  }

  /// A load whose block ends while its interrupt timer waits for a far-away second interrupt: the timer must not
  /// keep the model alive once the load ended.
  func refreshWithInterrupts() async {
    let firstInterrupt = WrapperLatch<Void>()
    await $items.load(interrupts: [.zero, .seconds(30)]) { yield in
      await firstInterrupt.value()
      yield(.loaded(self.source))
    } onInterrupt: { _ in
      self.interruptCount += 1
      firstInterrupt.fulfil()
    }
  }

  func saveAll() async {
    await $save.run {
      self.source = []
    }
  }
}

/// An ``ObservableModel`` for the lifetime tests.
@MainActor
private final class ObservedFeedModel: ObservableModel {
  let observers = ObserverRegistry()
  @Loadable var items: LoadableState<[Int]>
}

/// B10 lifetime: what the library keeps, and for how long.
@MainActor
@Suite struct LifetimeTests {
  // MARK: Deallocating the owner cancels its load

  @Test func deallocatingAModelCancelsItsRunningLoad() async {
    var model: FeedModel? = FeedModel()
    weak let weakModel = model
    let recorder = StateRecorder(model!.$items)
    let started = WrapperLatch<Void>()
    let sawCancellation = WrapperLatch<Bool>()
    let task: Task<Void, Never> = model!.$items.load {
      started.fulfil()
      sawCancellation.fulfil(await WrapperProbe.sleepUntilCancelled())
      return [1]
    }
    await started.value()
    model = nil
    #expect(weakModel == nil, "the running load keeps its model alive")
    #expect(await sawCancellation.value() == true, "the model's load was not cancelled")
    await task.value
    #expect(recorder.values == [.loading])
  }

  @Test func deallocatingAModelCancelsItsRunningProcess() async {
    var model: FeedModel? = FeedModel()
    weak let weakModel = model
    let started = WrapperLatch<Void>()
    let sawCancellation = WrapperLatch<Bool>()
    let task: Task<Void, Never> = model!.$save.run {
      started.fulfil()
      sawCancellation.fulfil(await WrapperProbe.sleepUntilCancelled())
    }
    await started.value()
    model = nil
    #expect(weakModel == nil)
    #expect(await sawCancellation.value() == true)
    await task.value
  }

  @Test func releasingAStandaloneWrapperCancelsItsLoadAndFreesItsStorage() async {
    // The interrupt sleeps on a clock that never moves: only the release can end the load.
    var count: Loadable<Int>? = Loadable(options: LoadOptions(clock: TestClock()))
    weak let weakStorage = count!.storage
    let started = WrapperLatch<Void>()
    let sawCancellation = WrapperLatch<Bool>()
    let task: Task<Void, Never> = count!.projectedValue.load(interrupts: [.seconds(5)]) {
      started.fulfil()
      sawCancellation.fulfil(await WrapperProbe.sleepUntilCancelled())
      return 1
    } onInterrupt: { _ in
      throw TimeoutError()
    }
    await started.value()
    count = nil
    #expect(weakStorage == nil)
    #expect(await sawCancellation.value() == true)
    await task.value
  }

  @Test func aLoadThatIgnoresCancellationCannotWriteAfterItsOwnerWentAway() async {
    var model: FeedModel? = FeedModel()
    weak let weakModel = model
    let recorder = StateRecorder(model!.$items)
    let gate = Gate()
    let task: Task<Void, Never> = model!.$items.load { yield in
      await gate.wait()
      yield(.loaded([1]))
    }
    await gate.untilWaiting(1)
    model = nil
    #expect(weakModel == nil)
    gate.open()
    await task.value
    #expect(recorder.values == [.loading])
  }

  // MARK: Nothing is kept after loads end

  @Test func nothingKeepsAModelAliveAfterItsLoadsFinished() async {
    var model: FeedModel? = FeedModel()
    weak let weakModel = model
    var task: Task<Void, Never>? = model!.refresh()
    await task!.value
    task = nil
    await model!.refreshWithInterrupts()
    await model!.saveAll()
    #expect(model!.items == .loaded([1, 2, 3]))
    #expect(model!.interruptCount == 1)
    #expect(model!.save.hasFinished)
    model = nil
    #expect(weakModel == nil, "something the library keeps retains the model")
  }

  @Test func nothingKeepsAModelAliveAfterItsLoadsWereCancelled() async {
    var model: FeedModel? = FeedModel()
    weak let weakModel = model
    let gate = Gate()
    let task: Task<Void, Never> = model!.$items.load { [model] in
      await gate.wait()
      return model!.source
    }
    model!.$items.cancel()
    gate.open()
    await task.value
    let failing: Task<Void, Never> = model!.$items.load { [model] () async throws -> [Int] in
      _ = model
      throw WrapperError(code: 1)
    }
    await failing.value
    model = nil
    #expect(weakModel == nil)
  }

  @Test func observingAModelDoesNotKeepItAlive() async {
    var model: ObservedFeedModel? = ObservedFeedModel()
    weak let weakModel = model
    let history = StateRecorder<LoadableState<[Int]>>()
    let token = model!.observe(\.items) { history.record($0) }
    let wrapperHistory = StateRecorder(model!.$items)
    let stream = model!.$items.states
    await model!.$items.load { [1] }
    #expect(history.values == [.loading, .loaded([1])])
    model = nil
    #expect(weakModel == nil)
    #expect(wrapperHistory.values == [.loading, .loaded([1])])
    token.cancel()
    _ = stream
  }

  @Test func endedLoadsLeaveNoBookkeepingBehind() async {
    let count = Loadable<Int>()
    let storage = count.projectedValue.storage
    await count.projectedValue.load { 1 }
    #expect(storage.tracker.isRunning == false)
    #expect(storage.tracker.task == nil)
    await count.projectedValue.load { () async throws -> Int in throw WrapperError(code: 1) }
    #expect(storage.tracker.task == nil)
    await count.projectedValue.load { () async throws -> Int in throw CancelLoadable() }
    #expect(storage.tracker.task == nil)
    let gate = Gate()
    let task: Task<Void, Never> = count.projectedValue.load {
      await gate.wait()
      return 2
    }
    #expect(storage.tracker.task != nil)
    count.projectedValue.cancel()
    #expect(storage.tracker.task == nil)
    gate.open()
    await task.value
    #expect(storage.tracker.task == nil)
    #expect(storage.tracker.isRunning == false)
  }

  // MARK: Observers

  @Test func cancelledTokensLeaveNoObserversBehind() {
    let count = Loadable<Int>()
    #expect(count.storage.ownObserverCount == 0)
    let first = count.projectedValue.observe { _ in }
    let second = count.projectedValue.observe { _ in }
    #expect(count.storage.ownObserverCount == 2)
    first.cancel()
    first.cancel()
    #expect(count.storage.ownObserverCount == 1)
    second.cancel()
    #expect(count.storage.ownObserverCount == 0)
  }

  @Test func releasedTokensLeaveNoObserversBehind() {
    @Process var save
    do {
      let token = $save.observe { _ in }
      #expect($save.storage.ownObserverCount == 1)
      _ = token
    }
    #expect($save.storage.ownObserverCount == 0)
  }

  @Test func cancelledTokenIsNeverCalledAgain() async {
    let count = Loadable<Int>()
    let recorder = StateRecorder(count.projectedValue)
    await count.projectedValue.load { 1 }
    recorder.token?.cancel()
    await count.projectedValue.load { 2 }
    #expect(recorder.values == [.loading, .loaded(1)])
    #expect(count.storage.ownObserverCount == 0)
  }

  @Test func endedStatesIterationLeavesNoObserversBehind() async {
    let count = Loadable<Int>()
    let iterating = Signal()  // fired once the sequence exists, and so its observer
    let iteration = Task {
      let states = count.projectedValue.states
      iterating.fire()
      for await state in states where state == .loaded(1) {
        break
      }
    }
    await until(.signal(iterating)) { count.storage.ownObserverCount == 1 }
    await count.projectedValue.load { 1 }
    await iteration.value
    // The iteration ended with its task, and the sequence's termination removed the observer then.
    #expect(count.storage.ownObserverCount == 0)
  }

  @Test func cancelledStatesIterationLeavesNoObserversBehind() async {
    let count = Loadable<Int>()
    let iterating = Signal()  // fired once the sequence exists, and so its observer
    let iteration = Task {
      let states = count.projectedValue.states
      iterating.fire()
      for await _ in states {}
    }
    await until(.signal(iterating)) { count.storage.ownObserverCount == 1 }
    iteration.cancel()
    await iteration.value
    #expect(count.storage.ownObserverCount == 0)
  }
}

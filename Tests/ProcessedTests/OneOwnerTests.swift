import ProcessedTesting
import Testing

@testable import Processed

// "One state, one owner" (SPEC.md): whichever face touches a state — `$x`, `load(\.x)`/`run(\.x, …)`, a manual
// write — there is one load bookkeeping and one delivery order, and `cancel()` of a token always holds.

/// A model whose states are wrappers, driven through both faces.
@MainActor
final class TwoFacedModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  @Loadable var count: LoadableState<Int>
  @Process<OwnerRunKind> var action
}

enum OwnerRunKind: Equatable, Sendable { case save, delete }

/// A plain property that resets itself from `didSet` when it becomes `.loaded(1)` (and may start a nested load).
@MainActor
final class SelfResettingModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  var reloadsInstead = false
  var count: LoadableState<Int> = .absent {
    didSet {
      guard count == .loaded(1) else { return }
      if reloadsInstead { load(\.count) { 2 } } else { reset(\.count) }
    }
  }
}

/// Properties that normalise what is written to them: negative values become 0.
@MainActor
final class NormalisingModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  /// The documented pattern: normalise, then notify.
  var notifying: LoadableState<Int> = .absent {
    didSet {
      if case .loaded(let value) = notifying, value < 0 { notifying = .loaded(0) }
      notifyObservers(\.notifying)
    }
  }
  /// Normalises without notifying: only key-path calls reach the observers.
  var plain: LoadableState<Int> = .absent {
    didSet {
      if case .loaded(let value) = plain, value < 0 { plain = .loaded(0) }
    }
  }
}

/// Holds a model so that a handler can release it.
@MainActor
final class ModelBox<Model: AnyObject> {
  var model: Model?
  init(_ model: Model) { self.model = model }
}

@MainActor
@Suite struct OneOwnerTests {
  // MARK: 1. One bookkeeping for both faces

  @Test func aManualWriteStopsARunningKeyPathLoad() async {
    let model = TwoFacedModel()
    let gate = Gate()
    let history = StateRecorder<LoadableState<Int>>()
    history.token = model.observe(\.count) { history.record($0) }
    let task: Task<Void, Never> = model.load(\.count) {
      await gate.wait()
      return 1
    }
    model.count = .loaded(5)
    gate.open()
    await task.value
    #expect(history.values == [.loading, .loaded(5)])
    #expect(model.count == .loaded(5))
    #expect(!model.$count.storage.tracker.isRunning)
  }

  @Test func theWrappersResetStopsARunningKeyPathLoad() async {
    let model = TwoFacedModel()
    let gate = Gate()
    let history = StateRecorder(model.$count)
    let task: Task<Void, Never> = model.load(\.count) {
      await gate.wait()
      return 1
    }
    model.$count.reset()
    gate.open()
    await task.value
    #expect(history.values == [.loading, .absent])
    #expect(model.count == .absent)
  }

  @Test func aNewerWrapperLoadWinsOverAnOlderKeyPathLoad() async {
    let model = TwoFacedModel()
    let gate = Gate()
    let history = StateRecorder<LoadableState<Int>>()
    history.token = model.observe(\.count) { history.record($0) }
    let older: Task<Void, Never> = model.load(\.count) {
      await gate.wait()
      return 1
    }
    await model.$count.load { 2 }
    gate.open()
    await older.value
    #expect(history.values == [.loading, .loaded(2)])
    #expect(model.count == .loaded(2))
  }

  @Test func aNewerKeyPathLoadWinsOverAnOlderWrapperLoad() async {
    let model = TwoFacedModel()
    let gate = Gate()
    let history = StateRecorder(model.$count)
    let older: Task<Void, Never> = model.$count.load {
      await gate.wait()
      return 1
    }
    await model.load(\.count) { 2 }
    gate.open()
    await older.value
    #expect(history.values == [.loading, .loaded(2)])
  }

  @Test func keyPathCancelReachesAWrapperLoad() async {
    let model = TwoFacedModel()
    let gate = Gate()
    let sawCancellation = WrapperLatch<Bool>()
    let history = StateRecorder(model.$count)
    let task: Task<Void, Never> = model.$count.load {
      await gate.wait()
      sawCancellation.fulfil(Task.isCancelled)
      return 1
    }
    model.cancel(\.count)
    #expect(!model.$count.storage.tracker.isRunning)
    gate.open()
    await task.value
    #expect(await sawCancellation.value())
    #expect(history.values == [.loading])
    #expect(model.count == .loading)
  }

  @Test func keyPathResetReachesAWrapperLoad() async {
    let model = TwoFacedModel()
    let gate = Gate()
    let history = StateRecorder(model.$count)
    let task: Task<Void, Never> = model.$count.load {
      await gate.wait()
      return 1
    }
    model.reset(\.count)
    gate.open()
    await task.value
    #expect(history.values == [.loading, .absent])
  }

  @Test func theWrappersCancelReachesAKeyPathRun() async {
    let model = TwoFacedModel()
    let gate = Gate()
    let history = StateRecorder(model.$action)
    let task: Task<Void, Never> = model.run(\.action, as: .save) {
      await gate.wait()
    }
    #expect(model.$action.storage.tracker.isRunning)
    model.$action.cancel()
    gate.open()
    await task.value
    #expect(history.values == [.running(.save)])
    #expect(model.action == .running(.save))
  }

  @Test func aNewerKeyPathRunSupersedesAWrapperRunAndAManualWriteStopsIt() async {
    let model = TwoFacedModel()
    let gate = Gate()
    let history = StateRecorder(model.$action)
    let first: Task<Void, Never> = model.$action.run(.save) { await gate.wait() }
    let second: Task<Void, Never> = model.run(\.action, as: .delete) { await gate.wait() }
    model.action = .idle
    gate.open()
    await first.value
    await second.value
    #expect(history.values == [.running(.save), .running(.delete), .idle])
  }

  // MARK: 2. One delivery order

  @Test func anObserverWritingTheStateDuringAKeyPathLoadIsSeenInOrderByEveryObserver() async {
    let model = TwoFacedModel()
    var tokens = Set<ObservationToken>()
    model.observe(\.count) { state in
      if state == .loaded(1) { model.count = .absent }
    }.store(in: &tokens)
    let later = StateRecorder<LoadableState<Int>>()
    later.token = model.observe(\.count) { later.record($0) }
    let own = StateRecorder(model.$count)
    await model.load(\.count) { 1 }
    #expect(later.values == [.loading, .loaded(1), .absent])
    #expect(own.values == [.loading, .loaded(1), .absent])
    #expect(model.count == .absent)
  }

  @Test func anObserverResettingByKeyPathDuringAWrapperLoadIsSeenInOrderByEveryObserver() async {
    let model = TwoFacedModel()
    var tokens = Set<ObservationToken>()
    model.$count.observe { state in
      if state == .loading { model.reset(\.count) }
    }.store(in: &tokens)
    let later = StateRecorder<LoadableState<Int>>()
    later.token = model.observe(\.count) { later.record($0) }
    let sawCancellation = WrapperLatch<Bool>()
    let task: Task<Void, Never> = model.$count.load {
      await Task.yield()
      sawCancellation.fulfil(Task.isCancelled)
      return 1
    }
    await task.value
    #expect(await sawCancellation.value())
    #expect(later.values == [.loading, .absent])
    #expect(model.count == .absent)
  }

  @Test func anObserverResettingAProcessByKeyPathIsSeenInOrder() async {
    let model = TwoFacedModel()
    var tokens = Set<ObservationToken>()
    model.observe(\.action) { state in
      if state == .running(.save) { model.reset(\.action) }
    }.store(in: &tokens)
    let later = StateRecorder<ProcessState<OwnerRunKind>>()
    later.token = model.observe(\.action) { later.record($0) }
    await model.$action.run(.save) {}
    #expect(later.values == [.running(.save), .idle])
    #expect(model.action == .idle)
  }

  // MARK: 3. Key-path writes and didSet

  @Test func aResetFromDidSetDuringAKeyPathWriteIsDelivered() async {
    let model = SelfResettingModel()
    let history = StateRecorder<LoadableState<Int>>()
    history.token = model.observe(\.count) { history.record($0) }
    await model.load(\.count) { 1 }
    #expect(history.values == [.loading, .loaded(1), .absent])
    #expect(model.count == .absent)
  }

  @Test func aLoadFromDidSetDuringAKeyPathWriteKeepsItsLoading() async {
    let model = SelfResettingModel()
    model.reloadsInstead = true
    let history = StateRecorder<LoadableState<Int>>()
    history.token = model.observe(\.count) { history.record($0) }
    await model.load(\.count) { 1 }
    await until(.changes(of: model, \.count)) { model.count == .loaded(2) }
    #expect(history.values == [.loading, .loaded(1), .loading, .loaded(2)])
  }

  @Test func aKeyPathWriteDeliversTheValueDidSetNormalisedTo() async {
    let model = NormalisingModel()
    let notifying = StateRecorder<LoadableState<Int>>()
    notifying.token = model.observe(\.notifying) { notifying.record($0) }
    let plain = StateRecorder<LoadableState<Int>>()
    plain.token = model.observe(\.plain) { plain.record($0) }
    await model.load(\.notifying) { -5 }
    await model.load(\.plain) { -5 }
    #expect(notifying.values == [.loading, .loaded(0)])
    #expect(plain.values == [.loading, .loaded(0)])
    // A direct write of the notifying property notifies once too.
    model.notifying = .loaded(-1)
    #expect(notifying.values == [.loading, .loaded(0), .loaded(0)])
  }

  // MARK: 4. and 5. cancel() holds once the registry is gone, and for concurrent cancels

  @Test func anObserverCancelledAfterTheRegistryClosedIsNotCalledForThatChange() async {
    let box = ModelBox(TwoFacedModel())
    var secondToken: ObservationToken?
    var secondCalls = 0
    let first = box.model!.observe(\.count) { _ in
      box.model = nil  // the registry closes
      secondToken?.cancel()
    }
    secondToken = box.model!.observe(\.count) { _ in secondCalls += 1 }
    let controller = box.model!.$count
    await controller.load { 1 }
    #expect(box.model == nil)
    #expect(secondCalls == 0)
    withExtendedLifetime(first) {}
  }

  @Test(.timeLimit(.minutes(2)))
  func aModelReleasedAndTokensCancelledOnAnotherThreadDuringADeliveryNeverCallsLate() async {
    let violations = LockedBox(0)
    for _ in 0..<200 {
      let box = ModelBox(TwoFacedModel())
      let observerCount = 40
      let cancelReturned = (0..<observerCount).map { _ in LockedBox(false) }
      let tokens = LockedBox<[ObservationToken]>([])
      let release = LockedBox<TwoFacedModel?>(nil)
      var registered: [ObservationToken] = []
      var background: Task<Void, Never>?
      for index in 0..<observerCount {
        registered.append(
          box.model!.observe(\.count) { _ in
            if cancelReturned[index].withLock({ $0 }) { violations.withLock { $0 += 1 } }
            if index == 0 {
              background = Task.detached {
                release.withLock { $0 = nil }  // the last reference: the model's registry closes here
                for (index, token) in tokens.withLock({ $0 }).enumerated().reversed() {
                  token.cancel()
                  cancelReturned[index].withLock { $0 = true }
                }
              }
            }
            for _ in 0..<200 where cancelReturned[observerCount - 1].withLock({ !$0 }) {}
          })
      }
      tokens.withLock { $0 = registered }
      registered = []
      let controller = box.model!.$count
      release.withLock { $0 = box.model }
      box.model = nil
      await controller.load { 1 }
      await background?.value
    }
    #expect(violations.withLock { $0 } == 0)
  }

  @Test(.timeLimit(.minutes(2)))
  func twoThreadsCancellingOneTokenBothHoldOnceTheyReturn() async {
    let model = TwoFacedModel()
    let violations = LockedBox(0)
    for _ in 0..<2_000 {
      let firstReturned = LockedBox(false)
      let secondReturned = LockedBox(false)
      let token = model.observe(\.count) { _ in
        if firstReturned.withLock({ $0 }) || secondReturned.withLock({ $0 }) {
          violations.withLock { $0 += 1 }
        }
      }
      let first = Task.detached {
        token.cancel()
        firstReturned.withLock { $0 = true }
      }
      let second = Task.detached {
        token.cancel()
        secondReturned.withLock { $0 = true }
      }
      await backToBack(
        while: { !(firstReturned.withLock { $0 } && secondReturned.withLock { $0 }) }, limit: 100_000
      ) { model.count = .loaded($0) }
      model.count = .absent
      await first.value
      await second.value
    }
    #expect(violations.withLock { $0 } == 0)
    #expect(model.observers.observerCount == 0)
  }

  // MARK: 6. A nested async load of the same state wins

  @Test func aNestedAsyncWrapperLoadOfTheSameStateWins() async {
    let model = TwoFacedModel()
    let history = StateRecorder(model.$count)
    await model.$count.load {
      await model.$count.load { 2 }
      return 1
    }
    #expect(model.count == .loaded(2))
    #expect(history.values == [.loading, .loaded(2)])
    #expect(!model.$count.storage.tracker.isRunning)
  }

  @Test func aNestedAsyncKeyPathLoadOfTheSameStateWins() async {
    let model = SelfResettingModel()
    let history = StateRecorder<LoadableState<Int>>()
    history.token = model.observe(\.count) { history.record($0) }
    await model.load(\.count) {
      await model.load(\.count) { 2 }
      return 3
    }
    #expect(model.count == .loaded(2))
    #expect(history.values == [.loading, .loaded(2)])
    #expect(mbHostEntries(of: model) == 0)
  }

  @Test func aNestedAsyncRunOfTheSameProcessWins() async {
    let model = TwoFacedModel()
    let history = StateRecorder(model.$action)
    await model.run(\.action, as: .save) {
      await model.$action.run(.delete) {}
    }
    #expect(history.values == [.running(.save), .running(.delete), .finished(.delete)])
  }

  /// Not passing on the engine's own cancellation (above) leaves the caller's: cancelling the caller still cancels.
  @Test func cancellingTheCallerOfAnAwaitedLoadStillCancelsIt() async {
    let model = TwoFacedModel()
    let gate = Gate()
    let caller = Task {
      await model.$count.load {
        await gate.wait()
        return 1
      }
    }
    await gate.untilWaiting(1)
    caller.cancel()
    gate.open()  // the block ignores cancellation: its caller returns when it returns
    await caller.value
    #expect(model.count == .loading)
    #expect(!model.$count.storage.tracker.isRunning)
  }

  // MARK: 7. An async caller does not keep the state alive

  @Test func releasingTheModelCancelsAnAwaitedWrapperLoadAndEndsItsStates() async {
    var model: TwoFacedModel? = TwoFacedModel()
    weak let weakModel = model
    let started = WrapperLatch<Void>()
    let sawCancellation = WrapperLatch<Bool>()
    let states = model!.$count.states
    let caller = Task { [weak model] in
      await model?.$count.load {
        started.fulfil()
        sawCancellation.fulfil(await WrapperProbe.sleepUntilCancelled())
        return 1
      }
    }
    await started.value()
    model = nil
    #expect(weakModel == nil)
    #expect(await sawCancellation.value())
    await caller.value
    var seen: [LoadableState<Int>] = []
    for await state in states { seen.append(state) }
    #expect(seen == [.absent, .loading])
  }
}

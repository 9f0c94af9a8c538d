import ProcessedTesting
import Testing

@testable import Processed

// Re-entrancy: loads started, cancelled and reset from inside observers and from inside their own blocks, and
// observers that add and cancel observers while loads run — on every face that drives a `LoadableState`
// (`LoadFaceKind`) and on both process faces (`RunFaceKind`). Every test asserts the exact history an observer
// records; the blocks wait on gates, never on sleeps.

// MARK: - Faces

/// A model whose states are `@Loadable`/`@Process` wrappers, observed through the model's registry.
@MainActor
final class ReentrantWrapperModel: ObservableModel {
  let observers = ObserverRegistry()
  @Loadable var count: LoadableState<Int>
  @Process<ReentrantRunKind> var action
}

/// A model whose plain stored states are driven by key path.
@MainActor
final class ReentrantKeyPathModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  var count: LoadableState<Int> = .absent
  var action: ProcessState<ReentrantRunKind> = .idle
}

/// A model whose `@Loadable` state is driven by key path (the write goes through the wrapper, which notifies too).
@MainActor
final class ReentrantKeyPathWrappedModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  @Loadable var count: LoadableState<Int>
}

/// A model whose state notifies from its own `didSet` and is driven by key path.
@MainActor
final class ReentrantKeyPathDidSetModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  var count: LoadableState<Int> = .absent {
    didSet { notifyObservers(\.count) }
  }
}

/// A model whose state's `didSet` notifies and also resets the state when it sees `.loaded(1)` — before or after
/// notifying — so that a key-path write runs a second key-path write of the same state while it is being stored.
@MainActor
final class ReentrantResettingDidSetModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  var resetsBeforeNotifying = false
  var count: LoadableState<Int> = .absent {
    didSet {
      if resetsBeforeNotifying, count == .loaded(1) { reset(\.count) }
      notifyObservers(\.count)
      if !resetsBeforeNotifying, count == .loaded(1) { reset(\.count) }
    }
  }
}

/// The process kinds of the process faces.
enum ReentrantRunKind: Equatable, Sendable {
  case alpha
  case beta
}

/// One way to drive a `LoadableState<Int>`: a standalone wrapper, a wrapper inside a model, or a key path of a class
/// whose property is plain, a wrapper, or notifies from `didSet`. The tests run the same script on each.
@MainActor
final class LoadFace {
  typealias Returning = @MainActor () async throws -> Int
  typealias Yielding = @MainActor (_ yield: (LoadableState<Int>) -> Void) async throws -> Void
  typealias Interrupt = @MainActor (_ accumulatedDelay: Duration) throws -> Void

  let state: () -> LoadableState<Int>
  let startLoad: (_ silently: Bool, _ block: @escaping Returning) -> Task<Void, Never>
  let loadYielding: (_ block: @escaping Yielding) -> Task<Void, Never>
  /// Main-actor isolated, so that a caller on the main actor starts the load before it first suspends.
  let loadAndWait: @MainActor (_ block: @escaping Returning) async -> Void
  let loadInterrupted:
    (_ interrupts: [Duration], _ block: @escaping Returning, _ onInterrupt: @escaping Interrupt) -> Task<Void, Never>
  let cancel: () -> Void
  let reset: () -> Void
  let write: (LoadableState<Int>) -> Void
  let observe: (_ handler: @escaping @MainActor (LoadableState<Int>) -> Void) -> ObservationToken
  /// The observers of the registry the face's `observe` uses.
  let observerCount: () -> Int
  /// Whether the engine tracks a running load (the wrapper's tracker, or a key-path table entry).
  let isRunning: () -> Bool
  /// The object whose lifetime the face's state follows (the model, or a standalone wrapper's storage).
  let owner: AnyObject

  init(
    state: @escaping () -> LoadableState<Int>,
    load: @escaping (Bool, @escaping Returning) -> Task<Void, Never>,
    loadYielding: @escaping (@escaping Yielding) -> Task<Void, Never>,
    loadAndWait: @escaping @MainActor (@escaping Returning) async -> Void,
    loadInterrupted: @escaping ([Duration], @escaping Returning, @escaping Interrupt) -> Task<Void, Never>,
    cancel: @escaping () -> Void,
    reset: @escaping () -> Void,
    write: @escaping (LoadableState<Int>) -> Void,
    observe: @escaping (@escaping @MainActor (LoadableState<Int>) -> Void) -> ObservationToken,
    observerCount: @escaping () -> Int,
    isRunning: @escaping () -> Bool,
    owner: AnyObject
  ) {
    self.state = state
    self.startLoad = load
    self.loadYielding = loadYielding
    self.loadAndWait = loadAndWait
    self.loadInterrupted = loadInterrupted
    self.cancel = cancel
    self.reset = reset
    self.write = write
    self.observe = observe
    self.observerCount = observerCount
    self.isRunning = isRunning
    self.owner = owner
  }

  /// Starts a load that returns the value of `block`.
  func load(silently: Bool = false, _ block: @escaping Returning) -> Task<Void, Never> { startLoad(silently, block) }

  /// A recorder of every change, registered now.
  func record() -> StateRecorder<LoadableState<Int>> {
    let recorder = StateRecorder<LoadableState<Int>>()
    recorder.token = observe { [unowned recorder] in recorder.record($0) }
    return recorder
  }
}

/// The faces that drive a `LoadableState<Int>`.
enum LoadFaceKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case wrapper
  case wrapperInModel
  case keyPath
  case keyPathOnWrapper
  case keyPathWithDidSet

  var testDescription: String { rawValue }

  /// Whether a direct write of the property notifies observers (a plain stored property does not: only
  /// `LoadableSupport` calls on it do).
  var manualWritesNotify: Bool { self != .keyPath }

  @MainActor
  func make() -> LoadFace {
    switch self {
    case .wrapper:
      let wrapper = Loadable<Int>()
      let controller = wrapper.projectedValue
      return LoadFace(
        state: { controller.state },
        load: { silently, block in controller.load(silently: silently, block: block) },
        loadYielding: { block in controller.load(block: block) },
        loadAndWait: { block in await controller.load(block: block) },
        loadInterrupted: { interrupts, block, onInterrupt in
          controller.load(interrupts: interrupts, block: block, onInterrupt: onInterrupt)
        },
        cancel: { controller.cancel() },
        reset: { controller.reset() },
        write: { wrapper.wrappedValue = $0 },
        observe: { controller.observe($0) },
        observerCount: { controller.storage.ownObserverCount },
        isRunning: { controller.storage.tracker.isRunning },
        owner: controller.storage)
    case .wrapperInModel:
      let model = ReentrantWrapperModel()
      return LoadFace(
        state: { model.count },
        load: { silently, block in model.$count.load(silently: silently, block: block) },
        loadYielding: { block in model.$count.load(block: block) },
        loadAndWait: { block in await model.$count.load(block: block) },
        loadInterrupted: { interrupts, block, onInterrupt in
          model.$count.load(interrupts: interrupts, block: block, onInterrupt: onInterrupt)
        },
        cancel: { model.$count.cancel() },
        reset: { model.$count.reset() },
        write: { model.count = $0 },
        observe: { model.observe(\.count, $0) },
        observerCount: { model.observers.observerCount },
        isRunning: { model.$count.storage.tracker.isRunning },
        owner: model)
    case .keyPath:
      return Self.keyPathFace(ReentrantKeyPathModel(), \.count)
    case .keyPathOnWrapper:
      return Self.keyPathFace(ReentrantKeyPathWrappedModel(), \.count)
    case .keyPathWithDidSet:
      return Self.keyPathFace(ReentrantKeyPathDidSetModel(), \.count)
    }
  }

  @MainActor
  private static func keyPathFace<Model: ObservableModel & LoadableSupport>(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, LoadableState<Int>>
  ) -> LoadFace {
    LoadFace(
      state: { model[keyPath: keyPath] },
      load: { silently, block in model.load(keyPath, silently: silently, block: block) },
      loadYielding: { block in model.load(keyPath, block: block) },
      loadAndWait: { block in await model.load(keyPath, block: block) },
      loadInterrupted: { interrupts, block, onInterrupt in
        model.load(keyPath, interrupts: interrupts, block: block, onInterrupt: onInterrupt)
      },
      cancel: { model.cancel(keyPath) },
      reset: { model.reset(keyPath) },
      write: { model[keyPath: keyPath] = $0 },
      observe: { model.observe(keyPath, $0) },
      observerCount: { model.observers.observerCount },
      isRunning: { keyPathHostIsRunning(model, keyPath) },
      owner: model)
  }
}

/// One way to drive a `ProcessState<ReentrantRunKind>`: a `@Process` wrapper or a `ProcessSupport` key path.
@MainActor
final class RunFace {
  let run: (_ kind: ReentrantRunKind, _ block: @escaping @MainActor () async throws -> Void) -> Task<Void, Never>
  let cancel: () -> Void
  let reset: () -> Void
  let observe: (_ handler: @escaping @MainActor (ProcessState<ReentrantRunKind>) -> Void) -> ObservationToken
  let isRunning: () -> Bool

  init(
    run: @escaping (ReentrantRunKind, @escaping @MainActor () async throws -> Void) -> Task<Void, Never>,
    cancel: @escaping () -> Void,
    reset: @escaping () -> Void,
    observe: @escaping (@escaping @MainActor (ProcessState<ReentrantRunKind>) -> Void) -> ObservationToken,
    isRunning: @escaping () -> Bool
  ) {
    self.run = run
    self.cancel = cancel
    self.reset = reset
    self.observe = observe
    self.isRunning = isRunning
  }

  func record() -> StateRecorder<ProcessState<ReentrantRunKind>> {
    let recorder = StateRecorder<ProcessState<ReentrantRunKind>>()
    recorder.token = observe { [unowned recorder] in recorder.record($0) }
    return recorder
  }
}

/// The faces that drive a `ProcessState<ReentrantRunKind>`.
enum RunFaceKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case wrapper
  case keyPath

  var testDescription: String { rawValue }

  @MainActor
  func make() -> RunFace {
    switch self {
    case .wrapper:
      let model = ReentrantWrapperModel()
      return RunFace(
        run: { kind, block in model.$action.run(kind, block: block) },
        cancel: { model.$action.cancel() },
        reset: { model.$action.reset() },
        observe: { model.observe(\.action, $0) },
        isRunning: { model.$action.storage.tracker.isRunning })
    case .keyPath:
      let model = ReentrantKeyPathModel()
      return RunFace(
        run: { kind, block in model.run(\.action, as: kind, block: block) },
        cancel: { model.cancel(\.action) },
        reset: { model.reset(\.action) },
        observe: { model.observe(\.action, $0) },
        isRunning: { keyPathHostIsRunning(model, \ReentrantKeyPathModel.action) })
    }
  }
}

/// `cancel()` or `reset()`, and what each writes.
enum ReentrantControl: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case cancel
  case reset

  var testDescription: String { rawValue }

  /// What the control writes after the states before it (`reset()` writes `.absent`, unless it already is).
  var written: [LoadableState<Int>] { self == .reset ? [.absent] : [] }

  @MainActor
  func apply(to face: LoadFace) {
    switch self {
    case .cancel: face.cancel()
    case .reset: face.reset()
    }
  }

  @MainActor
  func apply(to face: RunFace) {
    switch self {
    case .cancel: face.cancel()
    case .reset: face.reset()
    }
  }
}

/// A main-actor box that observers and blocks share with the test.
@MainActor
final class ReentrancyBox<Value> {
  var value: Value

  init(_ value: Value) { self.value = value }
}

// MARK: - Tests

@MainActor
@Suite struct ReentrancyTests {
  // MARK: Observers that start, cancel or reset loads

  /// An observer starts a newer load when it sees the `.loading` of the old one. `.loading` is not written again
  /// (the state already is that); the old load — superseded before its block ran — never writes: not its yield,
  /// not its error, and it does not end the newer load's bookkeeping. The newer load's value is written.
  @Test(arguments: LoadFaceKind.allCases)
  func observerStartingANewerLoadFromLoadingSupersedesTheOldOne(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let oldGate = Gate()
    let newGate = Gate()
    let newer = ReentrancyBox<Task<Void, Never>?>(nil)
    let starter = face.observe { state in
      guard state == .loading, newer.value == nil else { return }
      newer.value = face.load {
        await newGate.wait()
        return 2
      }
    }
    let old = face.loadYielding { yield in
      await oldGate.wait()
      yield(.loaded(10))
      throw WrapperError(code: 1)
    }
    #expect(newer.value != nil)
    #expect(history.values == [.loading])
    #expect(face.isRunning())

    oldGate.open()
    await old.value
    #expect(history.values == [.loading], "the superseded load wrote")
    #expect(face.isRunning(), "the superseded load ended the newer load's bookkeeping")

    newGate.open()
    await newer.value?.value
    #expect(history.values == [.loading, .loaded(2)])
    #expect(face.state() == .loaded(2))
    #expect(!face.isRunning())
    starter.cancel()
    history.token?.cancel()
    #expect(face.observerCount() == 0)
  }

  /// An observer cancels or resets the load from its `.loading`. The load's task is cancelled before its block
  /// runs; the block still runs (it ignores cancellation) but its value is never written. History: `[.loading]`
  /// after `cancel()`, `[.loading, .absent]` after `reset()`.
  @Test(arguments: LoadFaceKind.allCases, ReentrantControl.allCases)
  func observerCancellingOrResettingFromLoadingStopsTheLoad(_ kind: LoadFaceKind, _ control: ReentrantControl) async {
    let face = kind.make()
    let history = face.record()
    let controlled = ReentrancyBox(false)
    let stopper = face.observe { state in
      guard state == .loading, !controlled.value else { return }
      controlled.value = true
      control.apply(to: face)
    }
    let gate = Gate()
    let sawCancellation = ReentrancyBox<Bool?>(nil)
    let task = face.load {
      await gate.wait()
      sawCancellation.value = Task.isCancelled
      return 1
    }
    #expect(history.values == [.loading] + control.written)
    #expect(!face.isRunning(), "the stopped load is still tracked")

    gate.open()
    await task.value
    #expect(history.values == [.loading] + control.written)
    #expect(face.state() == (control == .cancel ? .loading : .absent))
    #expect(sawCancellation.value == true, "the stopped load's task was not cancelled")
    #expect(!face.isRunning())
    stopper.cancel()
    history.token?.cancel()
  }

  /// An observer cancels or resets the load when it sees a yielded state, during that yield's write: the write ends
  /// normally, and the block's later yields, across a suspension too, are never written. A key-path load's host
  /// leaves the table of running loads during that write (and may be freed): under the address sanitizer this also
  /// checks that the write does not touch it after.
  @Test(arguments: LoadFaceKind.allCases, ReentrantControl.allCases)
  func observerCancellingOrResettingFromAYieldStopsTheYieldingLoad(_ kind: LoadFaceKind, _ control: ReentrantControl)
    async
  {
    await stopYieldingLoad(kind, control, fromObserver: true)
  }

  /// A yielding load is cancelled or reset after its first yield — by an observer of that yield, or by its own block:
  /// nothing after it is written (neither later yields, across a suspension too, nor the block's error), and a newer
  /// load runs as usual.
  func stopYieldingLoad(_ kind: LoadFaceKind, _ control: ReentrantControl, fromObserver: Bool) async {
    let face = kind.make()
    let history = face.record()
    let stopper = face.observe { state in
      if fromObserver, state == .loaded(1) { control.apply(to: face) }
    }
    let task = face.loadYielding { yield in
      yield(.loaded(1))
      if !fromObserver { control.apply(to: face) }
      yield(.loaded(2))
      await Task.yield()
      yield(.loaded(3))
      throw WrapperError(code: 1)
    }
    await task.value
    #expect(history.values == [.loading, .loaded(1)] + control.written)
    #expect(face.state() == (control == .cancel ? .loaded(1) : .absent))
    #expect(!face.isRunning())
    await face.loadYielding { yield in yield(.loaded(4)) }.value
    #expect(face.state() == .loaded(4))
    stopper.cancel()
    history.token?.cancel()
  }

  /// An observer that starts a newer load when it sees a yield: the older load's later yields, across a suspension
  /// too, and its error are never written; the newer load writes `.loading` (the state was `.loaded(1)`) and its
  /// value, after the change that triggered it.
  @Test(arguments: LoadFaceKind.allCases)
  func observerStartingANewerLoadFromAYieldSupersedesTheYieldingLoad(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let newer = ReentrancyBox<Task<Void, Never>?>(nil)
    let newGate = Gate()
    let starter = face.observe { state in
      guard state == .loaded(1), newer.value == nil else { return }
      newer.value = face.load {
        await newGate.wait()
        return 5
      }
    }
    let oldGate = Gate()
    let yielded = WrapperLatch<Void>()
    let old = face.loadYielding { yield in
      yield(.loaded(1))
      yield(.loaded(2))
      yielded.fulfil()
      await oldGate.wait()
      yield(.loaded(3))
      throw WrapperError(code: 1)
    }
    await yielded.value()
    #expect(history.values == [.loading, .loaded(1), .loading])
    oldGate.open()
    await old.value
    #expect(history.values == [.loading, .loaded(1), .loading])
    #expect(face.isRunning())
    newGate.open()
    await newer.value?.value
    #expect(history.values == [.loading, .loaded(1), .loading, .loaded(5)])
    #expect(!face.isRunning())
    starter.cancel()
    history.token?.cancel()
  }

  /// `reset()` from an observer of a yield, while the load yields: the reset is delivered right after the yield,
  /// and the load's later yields — in the same turn and after a suspension — and its error are never written.
  @Test(arguments: LoadFaceKind.allCases)
  func resetFromAYieldObserverStopsTheYieldingLoad(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let resetter = face.observe { state in
      if state == .loaded(1) { face.reset() }
    }
    let gate = Gate()
    let yielded = WrapperLatch<Void>()
    let sawCancellation = ReentrancyBox<Bool?>(nil)
    let task = face.loadYielding { yield in
      yield(.loaded(1))
      yield(.loaded(2))
      yielded.fulfil()
      await gate.wait()
      sawCancellation.value = Task.isCancelled
      yield(.loaded(3))
      throw WrapperError(code: 1)
    }
    await yielded.value()
    #expect(history.values == [.loading, .loaded(1), .absent])
    #expect(!face.isRunning())
    gate.open()
    await task.value
    #expect(history.values == [.loading, .loaded(1), .absent])
    #expect(face.state() == .absent)
    #expect(sawCancellation.value == true)
    resetter.cancel()
    history.token?.cancel()
  }

  // MARK: Blocks that control their own load

  /// A block that calls `cancel()` or `reset()` on its own state and then returns a value: its task is cancelled
  /// at once, the value is never written, and `reset()` writes `.absent` before the block goes on. History:
  /// `[.loading]` or `[.loading, .absent]`.
  @Test(arguments: LoadFaceKind.allCases, ReentrantControl.allCases)
  func blockCancellingOrResettingItsOwnLoadThenReturningWritesNothingMore(
    _ kind: LoadFaceKind, _ control: ReentrantControl
  ) async {
    let face = kind.make()
    let history = face.record()
    let sawCancellation = ReentrancyBox<Bool?>(nil)
    let stillRunning = ReentrancyBox<Bool?>(nil)
    let task = face.load {
      await Task.yield()
      control.apply(to: face)
      sawCancellation.value = Task.isCancelled
      stillRunning.value = face.isRunning()
      return 1
    }
    await task.value
    #expect(history.values == [.loading] + control.written)
    #expect(face.state() == (control == .cancel ? .loading : .absent))
    #expect(sawCancellation.value == true, "the block's own task was not cancelled")
    #expect(stillRunning.value == false, "the load is still tracked after it cancelled itself")
    #expect(!face.isRunning())
    history.token?.cancel()
  }

  /// The same with a yielding block: yields before the call are written, none after it, nor its error.
  @Test(arguments: LoadFaceKind.allCases, ReentrantControl.allCases)
  func yieldingBlockCancellingOrResettingItsOwnLoadWritesNothingMore(_ kind: LoadFaceKind, _ control: ReentrantControl)
    async
  {
    await stopYieldingLoad(kind, control, fromObserver: false)
  }

  /// An awaited load whose block cancels or resets itself returns when the block returns, having written nothing
  /// more.
  @Test(arguments: LoadFaceKind.allCases, ReentrantControl.allCases)
  func awaitedLoadWhoseBlockCancelsOrResetsItselfReturns(_ kind: LoadFaceKind, _ control: ReentrantControl) async {
    let face = kind.make()
    let history = face.record()
    await face.loadAndWait {
      control.apply(to: face)
      return 1
    }
    #expect(history.values == [.loading] + control.written)
    #expect(!face.isRunning())
    history.token?.cancel()
  }

  /// A block that starts a newer load of its own state and then returns: its value is never written, `.loading`
  /// is not written twice, and the newer load's value is.
  @Test(arguments: LoadFaceKind.allCases)
  func blockStartingANewerLoadOfItsOwnStateThenReturningIsSuperseded(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let newer = ReentrancyBox<Task<Void, Never>?>(nil)
    let newGate = Gate()
    let old = face.load {
      newer.value = face.load {
        await newGate.wait()
        return 2
      }
      return 1
    }
    await old.value
    #expect(history.values == [.loading])
    #expect(face.isRunning(), "the superseded load ended the newer load's bookkeeping")
    newGate.open()
    await newer.value?.value
    #expect(history.values == [.loading, .loaded(2)])
    #expect(!face.isRunning())
    history.token?.cancel()
  }

  /// A yielding block that yields, starts a newer load of its own state, yields again and throws: the newer load
  /// writes `.loading` (the state was `.loaded(1)`), the old block's later yield and error are dropped.
  @Test(arguments: LoadFaceKind.allCases)
  func yieldingBlockStartingANewerLoadOfItsOwnStateIsSuperseded(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let newer = ReentrancyBox<Task<Void, Never>?>(nil)
    let old = face.loadYielding { yield in
      yield(.loaded(1))
      newer.value = face.load { 2 }
      yield(.loaded(99))
      throw WrapperError(code: 1)
    }
    await old.value
    await newer.value?.value
    #expect(history.values == [.loading, .loaded(1), .loading, .loaded(2)])
    #expect(!face.isRunning())
    history.token?.cancel()
  }

  /// A block that starts a newer load silently from inside itself: `.loading` stays, and only the newer load's
  /// value is written.
  @Test(arguments: LoadFaceKind.allCases)
  func blockStartingASilentNewerLoadIsSuperseded(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let newer = ReentrancyBox<Task<Void, Never>?>(nil)
    let old = face.load {
      newer.value = face.load(silently: true) { 2 }
      return 1
    }
    await old.value
    await newer.value?.value
    #expect(history.values == [.loading, .loaded(2)])
    history.token?.cancel()
  }

  // MARK: Observers that manage observers while loads run

  /// While two loads run, observer A registers a new observer at every `.loading`, cancels B (registered after it)
  /// at the first result and cancels itself at the second. Every observer sees exactly the changes made while it
  /// was registered and not cancelled: one registered during a change does not see that change; one cancelled
  /// during a change, before its turn, does not see it either.
  @Test(arguments: LoadFaceKind.allCases)
  func observersRegisteringAndCancellingObserversWhileLoadsRun(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let tokens = ReentrancyBox<[String: ObservationToken]>([:])
    let logs = ReentrancyBox<[String: [LoadableState<Int>]]>([:])
    let lateCount = ReentrancyBox(0)
    func register(_ name: String, _ extra: @escaping @MainActor (LoadableState<Int>) -> Void = { _ in }) {
      logs.value[name] = []
      tokens.value[name] = face.observe { state in
        logs.value[name, default: []].append(state)
        extra(state)
      }
    }
    register("A") { state in
      switch state {
      case .loading:
        lateCount.value += 1
        register("late\(lateCount.value)")
      case .loaded(1):
        tokens.value["B"]?.cancel()
      case .loaded(2):
        tokens.value["A"]?.cancel()
      default:
        break
      }
    }
    register("B")
    register("C")
    #expect(face.observerCount() == 3)

    await face.loadAndWait { 1 }
    await face.loadAndWait { 2 }

    let all: [LoadableState<Int>] = [.loading, .loaded(1), .loading, .loaded(2)]
    #expect(logs.value["A"] == all)
    #expect(logs.value["B"] == [.loading])
    #expect(logs.value["C"] == all)
    #expect(logs.value["late1"] == [.loaded(1), .loading, .loaded(2)])
    #expect(logs.value["late2"] == [.loaded(2)])
    // C, late1 and late2 are left.
    #expect(face.observerCount() == 3)
    for token in tokens.value.values { token.cancel() }
    #expect(face.observerCount() == 0)
    #expect(!face.isRunning())
  }

  /// An observer that releases every other observer's token (and its own) from inside a `.loading` notification
  /// of a running load: nobody after it hears that change or any later one, and nothing is left registered.
  @Test(arguments: LoadFaceKind.allCases)
  func observerReleasingEveryTokenDuringALoadSilencesEveryone(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let tokens = ReentrancyBox<[ObservationToken]>([])
    let calls = ReentrancyBox<[Int]>([])
    tokens.value.append(
      face.observe { _ in
        calls.value.append(0)
        tokens.value.removeAll()
      })
    for index in 1...5 {
      tokens.value.append(face.observe { _ in calls.value.append(index) })
    }
    await face.loadAndWait { 1 }
    #expect(calls.value == [0])
    #expect(face.observerCount() == 0)
    #expect(face.state() == .loaded(1))
  }

  // MARK: Lifetime

  /// After re-entrant loads — a newer load started from `.loading`, a reset from its result, a block that cancels
  /// itself, a superseded block that ends last — and the observer's cancellation, nothing the library keeps holds the
  /// state's owner: the model (or the standalone wrapper's storage) is freed and no key-path table entry is left.
  @Test(arguments: LoadFaceKind.allCases)
  func reentrantLoadsLeaveNothingBehind(_ kind: LoadFaceKind) async {
    weak var weakOwner: AnyObject?
    do {
      let face = kind.make()
      weakOwner = face.owner
      let history = face.record()
      let newer = ReentrancyBox<Task<Void, Never>?>(nil)
      let token = face.observe { state in
        if state == .loading, newer.value == nil { newer.value = face.load { 2 } }
        if state == .loaded(2) { face.reset() }
      }
      let gate = Gate()
      let old = face.load {
        await gate.wait()
        return 1
      }
      await newer.value?.value
      await face.loadAndWait {
        face.cancel()
        return 3
      }
      token.cancel()
      gate.open()
      await old.value
      #expect(history.values == [.loading, .loaded(2), .absent, .loading])
      #expect(!face.isRunning())
      history.token?.cancel()
      #expect(face.observerCount() == 0)
    }
    #expect(weakOwner == nil, "something the library keeps retains the state's owner after re-entrant loads")
  }

  // MARK: Processes

  /// An observer that starts another process when it sees `.running(.alpha)`: `.running(.beta)` is written right
  /// after that change, `.alpha` never finishes, `.beta` does.
  @Test(arguments: RunFaceKind.allCases)
  func observerStartingAnotherRunFromRunningSupersedesTheOldOne(_ kind: RunFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let newer = ReentrancyBox<Task<Void, Never>?>(nil)
    let starter = face.observe { state in
      guard state == .running(.alpha), newer.value == nil else { return }
      newer.value = face.run(.beta) {}
    }
    let gate = Gate()
    let old = face.run(.alpha) { await gate.wait() }
    #expect(history.values == [.running(.alpha), .running(.beta)])
    gate.open()
    await old.value
    await newer.value?.value
    #expect(history.values == [.running(.alpha), .running(.beta), .finished(.beta)])
    #expect(!face.isRunning())
    starter.cancel()
    history.token?.cancel()
  }

  /// A process block that cancels or resets its own run and then returns: `.finished` is never written.
  @Test(arguments: RunFaceKind.allCases, ReentrantControl.allCases)
  func runBlockCancellingOrResettingItsOwnRunWritesNothingMore(_ kind: RunFaceKind, _ control: ReentrantControl) async {
    let face = kind.make()
    let history = face.record()
    let task = face.run(.alpha) {
      control.apply(to: face)
    }
    await task.value
    #expect(history.values == [.running(.alpha)] + (control == .reset ? [.idle] : []))
    #expect(!face.isRunning())
    history.token?.cancel()
  }

  /// A process block that starts another run of its own state and then throws: its failure is never written.
  @Test(arguments: RunFaceKind.allCases)
  func runBlockStartingAnotherRunThenThrowingIsSuperseded(_ kind: RunFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let newer = ReentrancyBox<Task<Void, Never>?>(nil)
    let old = face.run(.alpha) {
      newer.value = face.run(.beta) {}
      throw WrapperError(code: 1)
    }
    await old.value
    await newer.value?.value
    #expect(history.values == [.running(.alpha), .running(.beta), .finished(.beta)])
    #expect(!face.isRunning())
    history.token?.cancel()
  }

  // MARK: Key-path writes to a wrapper-backed state

  /// A key-path load drives a `@Loadable` property of a model; the wrapper's *own* observer resets the state when
  /// it sees the result. The reset happens while the key-path write is still storing `.loaded(1)` through the
  /// wrapper, so the model's observers must see the same history as the wrapper's: each change once, in order,
  /// ending at the current state.
  @Test func wrapperObserverResettingDuringAKeyPathWriteReachesModelObserversInOrder() async {
    let model = ReentrantKeyPathWrappedModel()
    let modelHistory = StateRecorder(model, \.count)
    let wrapperHistory = StateRecorder(model.$count)
    let resetter = model.$count.observe { state in
      if state == .loaded(1) { model.reset(\.count) }
    }
    await model.load(\.count) { 1 }
    #expect(model.count == .absent)
    #expect(wrapperHistory.values == [.loading, .loaded(1), .absent])
    #expect(
      modelHistory.values == [.loading, .loaded(1), .absent],
      "model observers missed a change made while a key-path write was being stored")
    #expect(modelHistory.values.last == model.count)
    resetter.cancel()
  }

  /// The same when the wrapper's own observer starts a newer key-path load from the result.
  @Test func wrapperObserverStartingAKeyPathLoadDuringAKeyPathWriteReachesModelObserversInOrder() async {
    let model = ReentrantKeyPathWrappedModel()
    let modelHistory = StateRecorder(model, \.count)
    let wrapperHistory = StateRecorder(model.$count)
    let newer = ReentrancyBox<Task<Void, Never>?>(nil)
    let starter = model.$count.observe { state in
      guard state == .loaded(1), newer.value == nil else { return }
      newer.value = model.load(\.count) { 2 }
    }
    await model.load(\.count) { 1 }
    await newer.value?.value
    let expected: [LoadableState<Int>] = [.loading, .loaded(1), .loading, .loaded(2)]
    #expect(wrapperHistory.values == expected)
    #expect(modelHistory.values == expected, "model observers missed changes made during a key-path write")
    #expect(keyPathHostCount(of: model) == 0)
    starter.cancel()
  }

  /// A `didSet` that resets the state from inside a key-path write of it, before or after notifying: the model's
  /// observers see each change once, in order, ending at the current state.
  @Test(arguments: [false, true])
  func didSetResettingDuringAKeyPathWriteReachesModelObserversInOrder(resetsBeforeNotifying: Bool) async {
    let model = ReentrantResettingDidSetModel()
    model.resetsBeforeNotifying = resetsBeforeNotifying
    let history = StateRecorder(model, \.count)
    await model.load(\.count) { 1 }
    #expect(model.count == .absent)
    #expect(history.values == [.loading, .loaded(1), .absent])
    #expect(keyPathHostCount(of: model) == 0)
    history.token?.cancel()
  }
}

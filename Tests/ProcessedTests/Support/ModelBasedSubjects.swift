import Testing

@testable import Processed

// The subjects of the model-based test: the real types it drives, behind one small interface.

/// One state the runner drives with scripted loads, through the public API of a wrapper or a key-path protocol.
@MainActor
protocol MBSubject: AnyObject {
  associatedtype State: MBState

  var name: String { get }
  /// The object whose lifetime the run checks at the end (a model, or a standalone wrapper's storage).
  var owner: AnyObject { get }
  var state: State { get }
  /// Whether the yielding `load` forms exist (loads, not processes).
  var canYield: Bool { get }
  /// Whether a manual write reaches the observers.
  var manualWriteNotifies: Bool { get }
  /// Whether a manual write can leave the running load alone (key paths: a direct write does not cancel).
  var canWriteKeepingLoad: Bool { get }
  /// The observer registries, in the order a write notifies them.
  var paths: [MBPath] { get }
  /// Whether `states` exists.
  var hasStates: Bool { get }
  /// Whether the engine's bookkeeping holds a load (a wrapper's tracker; a key path's entry in the host table).
  var isTracking: Bool { get }
  /// The number of key-path host-table entries for this subject's instance.
  var hostEntries: Int { get }

  func start(_ request: MBRequest<State>) -> Task<Void, Never>
  func cancel()
  func reset()
  func write(_ state: State, endingLoad: Bool)
  func observe(_ path: MBPath, _ handler: @escaping @MainActor (State) -> Void) -> ObservationToken
  func observerCount(_ path: MBPath) -> Int
  func states() -> AsyncStream<State>
}

// MARK: - Models

/// A model whose `@Loadable`/`@Process` properties are driven through their controllers or through key paths.
@MainActor
final class MBWrappedModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  @Loadable var value: LoadableState<Int>
  @Processed.Process<MBKind> var action

  var valueWrapper: Loadable<Int> { _value }
  var actionWrapper: Processed.Process<MBKind> { _action }
}

/// A model whose plain properties notify from `didSet`.
@MainActor
final class MBDidSetModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  var value: LoadableState<Int> = .absent {
    didSet { notifyObservers(\.value) }
  }
  var action: ProcessState<MBKind> = .idle {
    didSet { notifyObservers(\.action) }
  }
}

/// A model whose properties are `@Observed`.
@MainActor
final class MBObservedModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  @Observed var value: LoadableState<Int> = .absent
  @Observed var action: ProcessState<MBKind> = .idle
}

/// A model whose plain properties do not notify: only key-path calls reach the observers.
@MainActor
final class MBPlainModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  var value: LoadableState<Int> = .absent
  var action: ProcessState<MBKind> = .idle
}

// MARK: - Wrappers

/// A `@Loadable<Int>`, standalone or a property of an ``ObservableModel``, driven through `$value`.
@MainActor
final class MBLoadableWrapperSubject: MBSubject {
  typealias State = LoadableState<Int>

  let name: String
  private let wrapper: Loadable<Int>
  private let model: MBWrappedModel?

  /// Drives the `@Loadable` of an existing model (the wrapper face of a mixed-face subject).
  init(model: MBWrappedModel) {
    self.model = model
    wrapper = model.valueWrapper
    name = "$value of a mixed-face subject"
  }

  init(inModel: Bool) {
    if inModel {
      let model = MBWrappedModel()
      self.model = model
      wrapper = model.valueWrapper
      name = "@Loadable in an ObservableModel"
    } else {
      model = nil
      wrapper = Loadable()
      name = "standalone Loadable<Int>"
    }
  }

  var owner: AnyObject { model ?? wrapper.storage }
  var state: State { model?.value ?? wrapper.wrappedValue }
  var canYield: Bool { true }
  var manualWriteNotifies: Bool { true }
  var canWriteKeepingLoad: Bool { false }
  var paths: [MBPath] { model == nil ? [.own] : [.own, .model] }
  var hasStates: Bool { true }
  var isTracking: Bool { wrapper.storage.tracker.isRunning }
  var hostEntries: Int { 0 }

  func start(_ request: MBRequest<State>) -> Task<Void, Never> {
    mbStart(request, on: wrapper.projectedValue)
  }

  func cancel() { wrapper.projectedValue.cancel() }

  func reset() { wrapper.projectedValue.reset() }

  func write(_ state: State, endingLoad: Bool) {
    if let model {
      model.value = state
    } else {
      wrapper.wrappedValue = state
    }
  }

  func observe(_ path: MBPath, _ handler: @escaping @MainActor (State) -> Void) -> ObservationToken {
    switch path {
    case .own: wrapper.projectedValue.observe(handler)
    case .model: model!.observe(\.value, handler)
    }
  }

  func observerCount(_ path: MBPath) -> Int {
    switch path {
    case .own: wrapper.storage.ownObserverCount
    case .model: model!.observers.observerCount
    }
  }

  func states() -> AsyncStream<State> { wrapper.projectedValue.states }
}

/// A `@Process<MBKind>`, standalone or a property of an ``ObservableModel``, driven through `$action`.
@MainActor
final class MBProcessWrapperSubject: MBSubject {
  typealias State = ProcessState<MBKind>

  let name: String
  private let wrapper: Processed.Process<MBKind>
  private let model: MBWrappedModel?

  /// Drives the `@Process` of an existing model (the wrapper face of a mixed-face subject).
  init(model: MBWrappedModel) {
    self.model = model
    wrapper = model.actionWrapper
    name = "$action of a mixed-face subject"
  }

  init(inModel: Bool) {
    if inModel {
      let model = MBWrappedModel()
      self.model = model
      wrapper = model.actionWrapper
      name = "@Process in an ObservableModel"
    } else {
      model = nil
      wrapper = Processed.Process()
      name = "standalone Process<MBKind>"
    }
  }

  var owner: AnyObject { model ?? wrapper.storage }
  var state: State { model?.action ?? wrapper.wrappedValue }
  var canYield: Bool { false }
  var manualWriteNotifies: Bool { true }
  var canWriteKeepingLoad: Bool { false }
  var paths: [MBPath] { model == nil ? [.own] : [.own, .model] }
  var hasStates: Bool { true }
  var isTracking: Bool { wrapper.storage.tracker.isRunning }
  var hostEntries: Int { 0 }

  func start(_ request: MBRequest<State>) -> Task<Void, Never> {
    mbRun(request, on: wrapper.projectedValue)
  }

  func cancel() { wrapper.projectedValue.cancel() }

  func reset() { wrapper.projectedValue.reset() }

  func write(_ state: State, endingLoad: Bool) {
    if let model {
      model.action = state
    } else {
      wrapper.wrappedValue = state
    }
  }

  func observe(_ path: MBPath, _ handler: @escaping @MainActor (State) -> Void) -> ObservationToken {
    switch path {
    case .own: wrapper.projectedValue.observe(handler)
    case .model: model!.observe(\.action, handler)
    }
  }

  func observerCount(_ path: MBPath) -> Int {
    switch path {
    case .own: wrapper.storage.ownObserverCount
    case .model: model!.observers.observerCount
    }
  }

  func states() -> AsyncStream<State> { wrapper.projectedValue.states }
}

// MARK: - Key paths

/// The wrapper's own registry of a key-path subject whose property is a `@Loadable`/`@Process`.
///
/// Its `wrapperFace` drives the same state through the wrapper's controller: the subject takes turns between the
/// key-path face and the wrapper face for every start, cancel and reset, so that one run mixes both faces of one
/// state (one state, one owner).
struct MBOwnObservers<State> {
  let observe: @MainActor (@escaping @MainActor (State) -> Void) -> ObservationToken
  let count: @MainActor () -> Int
  let states: @MainActor () -> AsyncStream<State>
  let wrapperFace: any MBFace<State>
}

/// Which face drives the next operation of a key-path subject: the wrapper's `$value` on every other operation when
/// the property is a wrapper, else the controller (`model.loadables.value`, `model.processes.action`) on every third,
/// else the key-path call — so that one run mixes every face of one state.
struct MBFaceTurns {
  enum Face { case wrapper, controller, keyPath }
  private var turn = 0
  private var controllerTurns = 0

  mutating func next(hasWrapper: Bool) -> Face {
    turn += 1
    if hasWrapper, turn % 2 == 0 { return .wrapper }
    controllerTurns += 1
    return controllerTurns % 3 == 0 ? .controller : .keyPath
  }
}

/// The operations of a subject that drive its load (so that another subject can lend them).
@MainActor
protocol MBFace<State>: AnyObject {
  associatedtype State: MBState
  func start(_ request: MBRequest<State>) -> Task<Void, Never>
  func cancel()
  func reset()
}

extension MBLoadableWrapperSubject: MBFace {}
extension MBProcessWrapperSubject: MBFace {}

/// Whether the engine holds a load of `keyPath` of `model` — in the wrapper's storage when the property is a
/// `@Loadable`/`@Process`, otherwise in the key-path host table.
@MainActor
func engineTracksLoad<Model: AnyObject, State: ManagedState & Sendable>(
  _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>
) -> Bool {
  if let storage = WrapperLookup.read(model, keyPath).storage { return storage.tracker.isRunning }
  return RunningKeyPathHosts.runningHost(for: KeyPathHostKey(model, keyPath)) != nil
}

/// A `LoadableState<Int>` property of a model, driven through `LoadableSupport`.
@MainActor
final class MBLoadableKeyPathSubject<Model: ObservableModel & LoadableSupport>: MBSubject {
  typealias State = LoadableState<Int>

  let name: String
  let model: Model
  let keyPath: ReferenceWritableKeyPath<Model, State>
  let manualWriteNotifies: Bool
  private let own: MBOwnObservers<State>?

  init(
    _ name: String, model: Model, keyPath: ReferenceWritableKeyPath<Model, State>, manualWriteNotifies: Bool,
    own: MBOwnObservers<State>? = nil
  ) {
    self.name = name
    self.model = model
    self.keyPath = keyPath
    self.manualWriteNotifies = manualWriteNotifies
    self.own = own
  }

  var owner: AnyObject { model }
  var state: State { model[keyPath: keyPath] }
  var canYield: Bool { true }
  /// A direct write of a plain property leaves a key-path load running; a wrapper's write cancels it.
  var canWriteKeepingLoad: Bool { own == nil }
  var paths: [MBPath] { own == nil ? [.model] : [.own, .model] }
  var hasStates: Bool { own != nil }
  var isTracking: Bool { engineTracksLoad(model, keyPath) }
  var hostEntries: Int { mbHostEntries(of: model) }

  /// Takes turns between the faces that drive the load (see ``MBFaceTurns``).
  private var turns = MBFaceTurns()

  func start(_ request: MBRequest<State>) -> Task<Void, Never> {
    switch turns.next(hasWrapper: own != nil) {
    case .wrapper: return own!.wrapperFace.start(request)
    case .controller: return mbStart(request, on: model.loadables[dynamicMember: keyPath])
    case .keyPath: break
    }
    let silently = request.silently
    if request.refresh {
      if request.isAsync {
        return Task { [self] in await model.refresh(keyPath, block: request.returning) }
      }
      return model.refresh(keyPath, block: request.returning)
    }
    if request.isAsync {
      return Task { [self] in
        switch (request.yielding, request.interrupts) {
        case (nil, nil):
          await model.load(keyPath, silently: silently, block: request.returning)
        case (nil, let interrupts?):
          await model.load(
            keyPath, silently: silently, interrupts: interrupts, block: request.returning,
            onInterrupt: request.onInterrupt)
        case (let yielding?, nil):
          await model.load(keyPath, silently: silently, block: yielding)
        case (let yielding?, let interrupts?):
          await model.load(
            keyPath, silently: silently, interrupts: interrupts, block: yielding, onInterrupt: request.onInterrupt)
        }
      }
    }
    switch (request.yielding, request.interrupts) {
    case (nil, nil):
      return model.load(keyPath, silently: silently, block: request.returning)
    case (nil, let interrupts?):
      return model.load(
        keyPath, silently: silently, interrupts: interrupts, block: request.returning,
        onInterrupt: request.onInterrupt)
    case (let yielding?, nil):
      return model.load(keyPath, silently: silently, block: yielding)
    case (let yielding?, let interrupts?):
      return model.load(
        keyPath, silently: silently, interrupts: interrupts, block: yielding, onInterrupt: request.onInterrupt)
    }
  }

  func cancel() {
    switch turns.next(hasWrapper: own != nil) {
    case .wrapper: own!.wrapperFace.cancel()
    case .controller: model.loadables[dynamicMember: keyPath].cancel()
    case .keyPath: model.cancel(keyPath)
    }
  }

  func reset() {
    switch turns.next(hasWrapper: own != nil) {
    case .wrapper: own!.wrapperFace.reset()
    case .controller: model.loadables[dynamicMember: keyPath].reset()
    case .keyPath: model.reset(keyPath)
    }
  }

  func write(_ state: State, endingLoad: Bool) {
    if endingLoad { model.cancel(keyPath) }
    model[keyPath: keyPath] = state
  }

  func observe(_ path: MBPath, _ handler: @escaping @MainActor (State) -> Void) -> ObservationToken {
    switch path {
    case .own: own!.observe(handler)
    case .model: model.observe(keyPath, handler)
    }
  }

  func observerCount(_ path: MBPath) -> Int {
    switch path {
    case .own: own!.count()
    case .model: model.observers.observerCount
    }
  }

  func states() -> AsyncStream<State> { own!.states() }
}

/// A `ProcessState<MBKind>` property of a model, driven through `ProcessSupport`.
@MainActor
final class MBProcessKeyPathSubject<Model: ObservableModel & ProcessSupport>: MBSubject {
  typealias State = ProcessState<MBKind>

  let name: String
  let model: Model
  let keyPath: ReferenceWritableKeyPath<Model, State>
  let manualWriteNotifies: Bool
  private let own: MBOwnObservers<State>?

  init(
    _ name: String, model: Model, keyPath: ReferenceWritableKeyPath<Model, State>, manualWriteNotifies: Bool,
    own: MBOwnObservers<State>? = nil
  ) {
    self.name = name
    self.model = model
    self.keyPath = keyPath
    self.manualWriteNotifies = manualWriteNotifies
    self.own = own
  }

  var owner: AnyObject { model }
  var state: State { model[keyPath: keyPath] }
  var canYield: Bool { false }
  /// A direct write of a plain property leaves a key-path load running; a wrapper's write cancels it.
  var canWriteKeepingLoad: Bool { own == nil }
  var paths: [MBPath] { own == nil ? [.model] : [.own, .model] }
  var hasStates: Bool { own != nil }
  var isTracking: Bool { engineTracksLoad(model, keyPath) }
  var hostEntries: Int { mbHostEntries(of: model) }

  /// Takes turns between the faces that drive the load (see ``MBFaceTurns``).
  private var turns = MBFaceTurns()

  func start(_ request: MBRequest<State>) -> Task<Void, Never> {
    switch turns.next(hasWrapper: own != nil) {
    case .wrapper: return own!.wrapperFace.start(request)
    case .controller: return mbRun(request, on: model.processes[dynamicMember: keyPath])
    case .keyPath: break
    }
    let silently = request.silently
    let kind = request.kind
    let block: @MainActor @Sendable () async throws -> Void = { _ = try await request.returning() }
    if request.isAsync {
      return Task { [self] in
        if let interrupts = request.interrupts {
          await model.run(
            keyPath, as: kind, silently: silently, interrupts: interrupts, block: block,
            onInterrupt: request.onInterrupt)
        } else {
          await model.run(keyPath, as: kind, silently: silently, block: block)
        }
      }
    }
    if let interrupts = request.interrupts {
      return model.run(
        keyPath, as: kind, silently: silently, interrupts: interrupts, block: block, onInterrupt: request.onInterrupt)
    }
    return model.run(keyPath, as: kind, silently: silently, block: block)
  }

  func cancel() {
    switch turns.next(hasWrapper: own != nil) {
    case .wrapper: own!.wrapperFace.cancel()
    case .controller: model.processes[dynamicMember: keyPath].cancel()
    case .keyPath: model.cancel(keyPath)
    }
  }

  func reset() {
    switch turns.next(hasWrapper: own != nil) {
    case .wrapper: own!.wrapperFace.reset()
    case .controller: model.processes[dynamicMember: keyPath].reset()
    case .keyPath: model.reset(keyPath)
    }
  }

  func write(_ state: State, endingLoad: Bool) {
    if endingLoad { model.cancel(keyPath) }
    model[keyPath: keyPath] = state
  }

  func observe(_ path: MBPath, _ handler: @escaping @MainActor (State) -> Void) -> ObservationToken {
    switch path {
    case .own: own!.observe(handler)
    case .model: model.observe(keyPath, handler)
    }
  }

  func observerCount(_ path: MBPath) -> Int {
    switch path {
    case .own: own!.count()
    case .model: model.observers.observerCount
    }
  }

  func states() -> AsyncStream<State> { own!.states() }
}

/// The number of key-path host-table entries for `instance` (other tests run in parallel and have their own).
@MainActor
func mbHostEntries(of instance: AnyObject) -> Int {
  let identifier = ObjectIdentifier(instance)
  return RunningKeyPathHosts.runningKeys.filter { $0.instance == identifier }.count
}

// MARK: - The subject list

/// Every subject the model-based test runs against.
enum MBSubjectKind: CaseIterable, Sendable {
  case loadable, loadableInModel, process, processInModel
  case loadableKeyPathDidSet, loadableKeyPathObserved, loadableKeyPathPlain, loadableKeyPathWrapped
  case processKeyPathDidSet, processKeyPathObserved, processKeyPathPlain, processKeyPathWrapped

  /// Runs `operations` random operations seeded with `seed` against a fresh subject of this kind.
  @MainActor
  func run(seed: UInt64, operations: Int, tracing: Bool) async -> MBOutcome {
    switch self {
    case .loadable: await MBRun.perform(seed, operations, tracing) { MBLoadableWrapperSubject(inModel: false) }
    case .loadableInModel: await MBRun.perform(seed, operations, tracing) { MBLoadableWrapperSubject(inModel: true) }
    case .process: await MBRun.perform(seed, operations, tracing) { MBProcessWrapperSubject(inModel: false) }
    case .processInModel: await MBRun.perform(seed, operations, tracing) { MBProcessWrapperSubject(inModel: true) }
    case .loadableKeyPathDidSet:
      await MBRun.perform(seed, operations, tracing) {
        MBLoadableKeyPathSubject(
          "LoadableSupport, didSet notifies", model: MBDidSetModel(), keyPath: \.value, manualWriteNotifies: true)
      }
    case .loadableKeyPathObserved:
      await MBRun.perform(seed, operations, tracing) {
        MBLoadableKeyPathSubject(
          "LoadableSupport, @Observed", model: MBObservedModel(), keyPath: \.value, manualWriteNotifies: true)
      }
    case .loadableKeyPathPlain:
      await MBRun.perform(seed, operations, tracing) {
        MBLoadableKeyPathSubject(
          "LoadableSupport, plain property", model: MBPlainModel(), keyPath: \.value, manualWriteNotifies: false)
      }
    case .loadableKeyPathWrapped:
      await MBRun.perform(seed, operations, tracing) {
        let model = MBWrappedModel()
        let controller = model.valueWrapper.projectedValue
        let own = MBOwnObservers(
          observe: { controller.observe($0) },
          count: { model.valueWrapper.storage.ownObserverCount },
          states: { controller.states },
          wrapperFace: MBLoadableWrapperSubject(model: model))
        return MBLoadableKeyPathSubject(
          "LoadableSupport and $value on one @Loadable", model: model, keyPath: \.value, manualWriteNotifies: true,
          own: own)
      }
    case .processKeyPathDidSet:
      await MBRun.perform(seed, operations, tracing) {
        MBProcessKeyPathSubject(
          "ProcessSupport, didSet notifies", model: MBDidSetModel(), keyPath: \.action, manualWriteNotifies: true)
      }
    case .processKeyPathObserved:
      await MBRun.perform(seed, operations, tracing) {
        MBProcessKeyPathSubject(
          "ProcessSupport, @Observed", model: MBObservedModel(), keyPath: \.action, manualWriteNotifies: true)
      }
    case .processKeyPathPlain:
      await MBRun.perform(seed, operations, tracing) {
        MBProcessKeyPathSubject(
          "ProcessSupport, plain property", model: MBPlainModel(), keyPath: \.action, manualWriteNotifies: false)
      }
    case .processKeyPathWrapped:
      await MBRun.perform(seed, operations, tracing) {
        let model = MBWrappedModel()
        let controller = model.actionWrapper.projectedValue
        let own = MBOwnObservers(
          observe: { controller.observe($0) },
          count: { model.actionWrapper.storage.ownObserverCount },
          states: { controller.states },
          wrapperFace: MBProcessWrapperSubject(model: model))
        return MBProcessKeyPathSubject(
          "ProcessSupport and $action on one @Process", model: model, keyPath: \.action, manualWriteNotifies: true,
          own: own)
      }
    }
  }
}

/// Starts `request` through a loadable controller — `$value`, or `model.loadables.value` — in every form.
@MainActor
func mbStart(_ request: MBRequest<LoadableState<Int>>, on controller: LoadableController<Int>) -> Task<Void, Never> {
  let silently = request.silently
  if request.refresh {
    if request.isAsync { return Task { await controller.refresh(block: request.returning) } }
    return controller.refresh(block: request.returning)
  }
  if request.isAsync {
    return Task {
      switch (request.yielding, request.interrupts) {
      case (nil, nil):
        await controller.load(silently: silently, block: request.returning)
      case (nil, let interrupts?):
        await controller.load(
          silently: silently, interrupts: interrupts, block: request.returning, onInterrupt: request.onInterrupt)
      case (let yielding?, nil):
        await controller.load(silently: silently, block: yielding)
      case (let yielding?, let interrupts?):
        await controller.load(
          silently: silently, interrupts: interrupts, block: yielding, onInterrupt: request.onInterrupt)
      }
    }
  }
  switch (request.yielding, request.interrupts) {
  case (nil, nil):
    return controller.load(silently: silently, block: request.returning)
  case (nil, let interrupts?):
    return controller.load(
      silently: silently, interrupts: interrupts, block: request.returning, onInterrupt: request.onInterrupt)
  case (let yielding?, nil):
    return controller.load(silently: silently, block: yielding)
  case (let yielding?, let interrupts?):
    return controller.load(
      silently: silently, interrupts: interrupts, block: yielding, onInterrupt: request.onInterrupt)
  }
}

/// Starts `request` through a process controller — `$action`, or `model.processes.action` — in every form.
@MainActor
func mbRun(_ request: MBRequest<ProcessState<MBKind>>, on controller: ProcessController<MBKind>) -> Task<Void, Never> {
  let silently = request.silently
  let kind = request.kind
  let block: @MainActor @Sendable () async throws -> Void = { _ = try await request.returning() }
  if request.isAsync {
    return Task {
      if let interrupts = request.interrupts {
        await controller.run(
          kind, silently: silently, interrupts: interrupts, block: block, onInterrupt: request.onInterrupt)
      } else {
        await controller.run(kind, silently: silently, block: block)
      }
    }
  }
  if let interrupts = request.interrupts {
    return controller.run(
      kind, silently: silently, interrupts: interrupts, block: block, onInterrupt: request.onInterrupt)
  }
  return controller.run(kind, silently: silently, block: block)
}

/// A key path of a class instance, as a controller drives it (`model.loadables.x`, `model.processes.y`): the same
/// operations as a wrapper's storage, performed through ``KeyPathHost`` on that instance and key path.
///
/// Erased over the model's type (``KeyPathTargetOf`` is the concrete one), so that `model.loadables.x` has the same
/// type as `$x`. It holds the model weakly: a controller never keeps its model alive, and once the model is gone
/// every operation does nothing (`start` returns a task that has ended, the state reads as the reset state).
@usableFromInline @MainActor
class KeyPathTarget<State: ManagedState & Sendable> {
  @usableFromInline
  init() {}

  @usableFromInline var currentState: State { State.resetState }

  @usableFromInline
  func start(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, priority: TaskPriority?, refreshing: Bool
  ) -> Task<Void, Never> { KeyPathTargetEnded.task }

  @usableFromInline
  func startAwaited(_ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, refreshing: Bool) -> AwaitedLoad {
    AwaitedLoad(task: KeyPathTargetEnded.task, forwardsCancellation: false)
  }

  @usableFromInline func cancel() {}
  @usableFromInline func reset() {}

  @usableFromInline
  func observe(_ onChange: @escaping @MainActor (State) -> Void) -> ObservationToken {
    ObservationToken.inert
  }

  @usableFromInline
  func states() -> AsyncStream<State> {
    AsyncStream { $0.finish() }
  }

  @usableFromInline var activity: LoadActivity { LoadActivity() }

  @usableFromInline
  func observeActivity(_ onChange: @escaping @MainActor (LoadActivity) -> Void) -> ObservationToken {
    ObservationToken.inert
  }

  @usableFromInline var lastValueState: State? { nil }
}

/// A task that has ended, returned by the operations of a controller whose model is gone.
enum KeyPathTargetEnded {
  static let task = Task<Void, Never> {}
}

/// The key path `keyPath` of `model`.
@usableFromInline @MainActor
final class KeyPathTargetOf<Model: AnyObject, State: ManagedState & Sendable>: KeyPathTarget<State> {
  @usableFromInline weak var model: Model?
  @usableFromInline let keyPath: ReferenceWritableKeyPath<Model, State>

  @usableFromInline
  init(model: Model, keyPath: ReferenceWritableKeyPath<Model, State>) {
    self.model = model
    self.keyPath = keyPath
    super.init()
    // From now on the library keeps this state's activity and last value beside it (see `KeyPathStateExtras`).
    let extras = KeyPathStateExtras.make(for: model, KeyPathHostKey(model, keyPath))
    KeyPathHost.running(model, keyPath)?.extras = extras
  }

  @usableFromInline override var currentState: State {
    guard let model else { return State.resetState }
    return model[keyPath: keyPath]
  }

  @usableFromInline
  override func start(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, priority: TaskPriority?, refreshing: Bool
  ) -> Task<Void, Never> {
    guard let model else { return KeyPathTargetEnded.task }
    return KeyPathHost.start(
      model, keyPath, plan, silently: silently, options: options, priority: priority, refreshing: refreshing)
  }

  @usableFromInline
  override func startAwaited(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, refreshing: Bool
  ) -> AwaitedLoad {
    guard let model else { return AwaitedLoad(task: KeyPathTargetEnded.task, forwardsCancellation: false) }
    return KeyPathHost.startAwaited(
      model, keyPath, plan, silently: silently, options: options, refreshing: refreshing)
  }

  @usableFromInline override func cancel() {
    guard let model else { return }
    KeyPathHost.cancel(model, keyPath)
  }

  @usableFromInline override func reset() {
    guard let model else { return }
    KeyPathHost.reset(model, keyPath)
  }

  /// On an ``ObservableModel``: exactly `model.observe(keyPath)`. On another class: the changes the library writes
  /// (its loads, cancel and reset), through a registry kept beside the state.
  @usableFromInline
  override func observe(_ onChange: @escaping @MainActor (State) -> Void) -> ObservationToken {
    guard let model else { return ObservationToken.inert }
    let link = link(of: model)
    let token = link.addObserver(onChange)
    if model is any ObservableModel { _ = model[keyPath: keyPath] }  // links a wrapper-backed property
    return token
  }

  @usableFromInline
  override func states() -> AsyncStream<State> {
    guard let model else { return AsyncStream { $0.finish() } }
    let (stream, continuation) = AsyncStream<State>.makeStream()
    continuation.yield(model[keyPath: keyPath])
    let token = link(of: model).addObserver(onRegistryEnd: { continuation.finish() }) { (state: State) in
      continuation.yield(state)
    }
    if model is any ObservableModel { _ = model[keyPath: keyPath] }
    continuation.onTermination = { _ in token.cancel() }
    return stream
  }

  /// The slot the state's changes are delivered through: the model's registry, or the registry kept beside the
  /// state for a class that has none.
  private func link(of model: Model) -> SlotLink {
    if let link = SlotLink.resolve(model, keyPath: keyPath) { return link }
    let extras = KeyPathStateExtras.make(for: model, KeyPathHostKey(model, keyPath))
    let link = extras.ownLink(of: State.self)
    if let host = KeyPathHost.running(model, keyPath), host.link == nil {
      host.link = link
      host.extras = extras
    }
    return link
  }

  @usableFromInline override var activity: LoadActivity {
    guard let model else { return LoadActivity() }
    if let storage = WrapperLookup.read(model, keyPath).storage { return storage.activity }
    if let host = KeyPathHost.running(model, keyPath) { return host.activity }
    let record = KeyPathStateExtras.existing(for: model, KeyPathHostKey(model, keyPath))?.activityRecord
    return record?.activity(isRunning: false) ?? LoadActivity()
  }

  @usableFromInline
  override func observeActivity(_ onChange: @escaping @MainActor (LoadActivity) -> Void) -> ObservationToken {
    guard let model else { return ObservationToken.inert }
    if let storage = WrapperLookup.read(model, keyPath).storage { return storage.observeActivity(onChange) }
    if let host = KeyPathHost.running(model, keyPath) { return host.observeActivity(onChange) }
    let extras = KeyPathStateExtras.make(for: model, KeyPathHostKey(model, keyPath))
    let record = extras.activityRecord ?? ActivityRecord(published: LoadActivity())
    extras.activityRecord = record
    record.publish(isRunning: false)
    return record.observe(\.published, onChange)
  }

  @usableFromInline override var lastValueState: State? {
    guard let model else { return nil }
    if let storage = WrapperLookup.read(model, keyPath).storage { return storage.lastValueState }
    return KeyPathStateExtras.existing(for: model, KeyPathHostKey(model, keyPath))?.lastValueState as? State
  }
}

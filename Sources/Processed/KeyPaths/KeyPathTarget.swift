/// A key path of a class instance, as a controller drives it (`model.loadables.x`), through ``KeyPathHost``.
///
/// Erased over the model's type (``KeyPathTargetOf`` is the concrete one), and holds the model weakly: once it is gone,
/// every operation does nothing.
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

  @usableFromInline
  func startLoadMore(
    _ makePlan: (State) -> LoadPlan<State>?, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never>? { nil }

  @usableFromInline
  func startAwaitedLoadMore(_ makePlan: (State) -> LoadPlan<State>?, options: LoadOptions?) -> AwaitedLoad? { nil }

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

  /// A binding of this state to a ``LoadCache`` entry; `nil` once the model is gone.
  @usableFromInline
  func makeCacheBinding<Value>(_ type: Value.Type) -> CacheBinding<Value>? { nil }
}

/// A task that has ended, returned by the operations of a controller whose model is gone, and by calls that start
/// nothing (a `loadMore` with no next page).
@usableFromInline
enum KeyPathTargetEnded {
  @usableFromInline static let task = Task<Void, Never> {}
}

/// The key path `keyPath` of `model`. Every operation whose model is gone falls back to the base class's.
@usableFromInline @MainActor
final class KeyPathTargetOf<Model: AnyObject, State: ManagedState & Sendable>: KeyPathTarget<State> {
  weak var model: Model?
  let keyPath: ReferenceWritableKeyPath<Model, State>
  /// What the library keeps about this state beyond its running load (see ``KeyPathStateExtras``): made with the
  /// controller, so that from now on the state's activity is kept (its last value is kept by every library write).
  let extras: KeyPathStateExtras

  @usableFromInline
  init(model: Model, keyPath: ReferenceWritableKeyPath<Model, State>) {
    self.model = model
    self.keyPath = keyPath
    extras = KeyPathStateExtras.make(for: model, KeyPathHostKey(model, keyPath))
    super.init()
    KeyPathHost.running(model, keyPath)?.extras = extras
    // On a class that is not an `ObservableModel`, the slot the state's last value is kept in (see
    // `KeyPathHost.keepLastValue`) is made with the controller, so that `lastValue` is kept from now on.
    if !(model is any ObservableModel) { _ = link(of: model) }
  }

  override var currentState: State {
    guard let model else { return super.currentState }
    return model[keyPath: keyPath]
  }

  override func start(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, priority: TaskPriority?, refreshing: Bool
  ) -> Task<Void, Never> {
    guard let model else {
      return super.start(plan, silently: silently, options: options, priority: priority, refreshing: refreshing)
    }
    return KeyPathHost.start(
      model, keyPath, KeyPathAccess(keyPath), plan, silently: silently, options: options, priority: priority,
      refreshing: refreshing)
  }

  override func startAwaited(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, refreshing: Bool
  ) -> AwaitedLoad {
    guard let model else {
      return super.startAwaited(plan, silently: silently, options: options, refreshing: refreshing)
    }
    return KeyPathHost.startAwaited(
      model, keyPath, KeyPathAccess(keyPath), plan, silently: silently, options: options, refreshing: refreshing)
  }

  override func startLoadMore(
    _ makePlan: (State) -> LoadPlan<State>?, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never>? {
    guard let model else { return nil }
    return KeyPathHost.startLoadMore(
      model, keyPath, KeyPathAccess(keyPath), makePlan, options: options, priority: priority)
  }

  override func startAwaitedLoadMore(_ makePlan: (State) -> LoadPlan<State>?, options: LoadOptions?) -> AwaitedLoad? {
    guard let model else { return nil }
    return KeyPathHost.startAwaitedLoadMore(model, keyPath, KeyPathAccess(keyPath), makePlan, options: options)
  }

  override func makeCacheBinding<Value>(_ type: Value.Type) -> CacheBinding<Value>? {
    guard let model else { return nil }
    // `State` is `LoadableState<Value>`: the cached faces exist only for loadable states of that value type.
    if let storage = WrapperLookup.read(model, keyPath).storage {
      return StorageCacheBinding.of(unsafeDowncast(storage, to: StateStorage<LoadableState<Value>>.self))
    }
    return KeyPathCacheBinding.of(model, keyPath as! ReferenceWritableKeyPath<Model, LoadableState<Value>>)
  }

  override func cancel() {
    guard let model else { return }
    KeyPathHost.cancel(model, keyPath)
  }

  override func reset() {
    guard let model else { return }
    KeyPathHost.reset(model, keyPath)
  }

  /// On an ``ObservableModel``: exactly `model.observe(keyPath)`. On another class: the changes the library writes
  /// (its loads, cancel and reset), through a slot kept beside the state.
  override func observe(_ onChange: @escaping @MainActor (State) -> Void) -> ObservationToken {
    guard let model else { return super.observe(onChange) }
    let token = link(of: model).addObserver(onChange)
    if model is any ObservableModel { _ = model[keyPath: keyPath] }  // links a wrapper-backed property
    return token
  }

  override func states() -> AsyncStream<State> {
    guard let model else { return super.states() }
    let stream = AsyncStream.states(startingWith: model[keyPath: keyPath]) { onRegistryEnd, onChange in
      link(of: model).addObserver(onRegistryEnd: onRegistryEnd) { (state: State) in onChange(state) }
    }
    if model is any ObservableModel { _ = model[keyPath: keyPath] }  // links a wrapper-backed property
    return stream
  }

  /// The slot the state's changes are delivered through: the model's registry's, or the one kept beside the state
  /// for a class that has no registry (a running load's host is pointed at it, so that its writes reach it).
  private func link(of model: Model) -> SlotLink {
    if let link = SlotLink.resolve(model, keyPath: keyPath) { return link }
    let link = extras.ownLink(of: State.self)
    if let host = KeyPathHost.running(model, keyPath), host.link == nil {
      host.link = link
    }
    return link
  }

  override var activity: LoadActivity {
    guard let model else { return super.activity }
    if let host = KeyPathHost.running(model, keyPath) { return host.activity }
    return extras.activityRecord?.activity(isRunning: false) ?? super.activity
  }

  override func observeActivity(_ onChange: @escaping @MainActor (LoadActivity) -> Void) -> ObservationToken {
    guard let model else { return super.observeActivity(onChange) }
    if let host = KeyPathHost.running(model, keyPath) { return host.observeActivity(onChange) }
    let record = extras.activityRecord ?? ActivityRecord(published: LoadActivity())
    extras.activityRecord = record
    return record.observe(isRunning: false, onChange)
  }

  override var lastValueState: State? {
    guard let model else { return nil }
    return (link(of: model).anchor.mainFields.pointee.keptState as? KeptState<State>)?.state
  }
}

/// A `@Loadable`/`@Process` property reached by key path (`model.loadables.x` where `x` is a wrapper): the wrapper's
/// own storage, so that every face drives one state — held weakly, with its model, so that the controller keeps
/// neither alive. Once either is gone every operation does nothing, as for ``KeyPathTargetOf``, and `states` has
/// ended with the storage.
@usableFromInline @MainActor
final class WrapperTargetOf<State: ManagedState & Sendable>: KeyPathTarget<State> {
  @usableFromInline weak var model: AnyObject?
  @usableFromInline weak var storage: StateStorage<State>?

  @usableFromInline
  init(model: AnyObject, storage: StateStorage<State>) {
    self.model = model
    self.storage = storage
    super.init()
  }

  /// The storage, while its model exists.
  var live: StateStorage<State>? { model == nil ? nil : storage }

  override var currentState: State { live?.currentState ?? super.currentState }

  override func start(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, priority: TaskPriority?, refreshing: Bool
  ) -> Task<Void, Never> {
    guard let storage = live else {
      return super.start(plan, silently: silently, options: options, priority: priority, refreshing: refreshing)
    }
    return storage.start(plan, silently: silently, options: options, priority: priority, refreshing: refreshing)
  }

  override func startAwaited(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, refreshing: Bool
  ) -> AwaitedLoad {
    guard let storage = live else {
      return super.startAwaited(plan, silently: silently, options: options, refreshing: refreshing)
    }
    return storage.startAwaited(plan, silently: silently, options: options, refreshing: refreshing)
  }

  override func startLoadMore(
    _ makePlan: (State) -> LoadPlan<State>?, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never>? {
    guard let storage = live else { return nil }
    return storage.startLoadMore(makePlan(storage.currentState), options: options, priority: priority)
  }

  override func startAwaitedLoadMore(_ makePlan: (State) -> LoadPlan<State>?, options: LoadOptions?) -> AwaitedLoad? {
    guard let storage = live else { return nil }
    return storage.startAwaitedLoadMore(makePlan(storage.currentState), options: options)
  }

  override func makeCacheBinding<Value>(_ type: Value.Type) -> CacheBinding<Value>? {
    guard let storage = live else { return nil }
    // `State` is `LoadableState<Value>`: the cached faces exist only for loadable states of that value type.
    return StorageCacheBinding.of(unsafeDowncast(storage, to: StateStorage<LoadableState<Value>>.self))
  }

  override func cancel() { live?.cancelLoad() }
  override func reset() { live?.resetState() }

  override func observe(_ onChange: @escaping @MainActor (State) -> Void) -> ObservationToken {
    live?.observe(onChange) ?? super.observe(onChange)
  }

  override func states() -> AsyncStream<State> { live?.states() ?? super.states() }

  override var activity: LoadActivity { live?.activity ?? super.activity }

  override func observeActivity(_ onChange: @escaping @MainActor (LoadActivity) -> Void) -> ObservationToken {
    live?.observeActivity(onChange) ?? super.observeActivity(onChange)
  }

  override var lastValueState: State? { live?.lastValueState }
}

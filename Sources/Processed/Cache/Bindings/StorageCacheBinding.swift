/// A `@Loadable` wrapper's state bound to a cache entry (also when reached through a key path).
@usableFromInline @MainActor
final class StorageCacheBinding<Value: Sendable>: CacheBinding<Value> {
  /// The storage's shared host reference (weak to the storage, made once per storage): it reaches the storage
  /// without a weak reference of the binding's own. The storage keeps its binding (`StateStorage.cacheBinding`), so a
  /// binding is never taken for another storage's.
  @usableFromInline let reference: HostReference<StateStorage<State>>

  /// The storage, while it exists.
  @inlinable var storage: StateStorage<State>? { reference.weakObject }

  /// Whether the storage's declaration has options (they never change): most do not, and then reading them costs no
  /// weak reference to the storage.
  let declares: Bool

  init(_ storage: StateStorage<State>) {
    reference = storage.hostReference
    declares = storage.declaredOptions != nil
    super.init(id: BoundStateID(storage, nil), keptByState: true)
  }

  /// The storage's binding: the one it keeps, else a new one (not bound yet), which it keeps from now on.
  @usableFromInline
  static func of(_ storage: StateStorage<State>) -> StorageCacheBinding {
    if let kept: StorageCacheBinding = storage.keptCacheBinding() { return kept }
    let made = StorageCacheBinding(storage)
    storage.cacheBinding = made
    return made
  }

  override func host() -> (any StateHost<State>)? { storage }

  override var isAlive: Bool { storage != nil }

  override func showAtOnce(_ value: Value, version: UInt64) {
    guard let storage else { return }
    // Every write of a wrapper's state unbinds it but the entry's own: bound since it was written at `version`, the
    // state still shows that value. A state that was not, but shows an equal value, shows it too.
    let shows = shownVersion == version || valuesAreKnownEqual(State.loaded(value), storage.currentState)
    CacheBindings.asCache(id) {
      storage.keepError(nil)
      if shows { storage.cancelLoad(restoring: false) } else { storage.overwrite(.loaded(value)) }
      storage.publishActivity()
    }
    shownVersion = version
  }

  override var declaredOptions: LoadOptions.Resolved? { declares ? storage?.declaredOptions : nil }

  /// A load of the state as the cache, started on the storage.
  @inlinable
  func startStorageLoad(
    _ plan: LoadPlan<State>, on storage: StateStorage<State>, silently: Bool, options: LoadOptions?,
    priority: TaskPriority?
  ) -> Task<Void, Never> {
    let options = Self.waitingOptions(options, on: storage)
    return CacheBindings.asCache(id) {
      storage.start(plan, silently: silently, options: options, priority: priority)
    }
  }

  /// The waiting load of an `async` caller, started on the storage.
  @inlinable
  func startAwaitedStorageLoad(_ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?) -> AwaitedLoad {
    guard let storage else { return AwaitedLoad(task: KeyPathTargetEnded.task, forwardsCancellation: false) }
    let options = Self.waitingOptions(options, on: storage)
    return CacheBindings.asCache(id) { storage.startAwaited(plan, silently: silently, options: options) }
  }

  override func startHostLoad(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never> {
    guard let storage else { return KeyPathTargetEnded.task }
    return startStorageLoad(plan, on: storage, silently: silently, options: options, priority: priority)
  }

  override func startHostAwaitedLoad(_ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?) -> AwaitedLoad {
    startAwaitedStorageLoad(plan, silently: silently, options: options)
  }
}

extension StateStorage {
  /// The cache binding this storage keeps, typed without a dynamic cast. Invariant: a storage of
  /// `LoadableState<Value>` keeps only a `StorageCacheBinding<Value>` (only ``StorageCacheBinding/of(_:)`` sets it),
  /// so the downcast is known to hold (checked in debug builds).
  @inlinable
  func keptCacheBinding<Value>() -> StorageCacheBinding<Value>? where State == LoadableState<Value> {
    guard let kept = cacheBinding else { return nil }
    return unsafeDowncast(kept, to: StorageCacheBinding<Value>.self)
  }
}

/// A `@Loadable` wrapper's state bound to a cache entry (also when reached through a key path).
@usableFromInline @MainActor
final class StorageCacheBinding<Value: Sendable>: CacheBinding<Value> {
  @usableFromInline weak var storage: StateStorage<State>?

  init(_ storage: StateStorage<State>) {
    self.storage = storage
    super.init(id: BoundStateID(storage, nil))
  }

  /// The storage's binding: the one it has, else a new one (not bound yet).
  static func of(_ storage: StateStorage<State>) -> StorageCacheBinding {
    if let bound = CacheBindings.table[BoundStateID(storage, nil)] as? StorageCacheBinding, bound.storage === storage {
      return bound
    }
    return StorageCacheBinding(storage)
  }

  override func host() -> (any StateHost<State>)? { storage }

  override var isAlive: Bool { storage != nil }

  override func showAtOnce(_ value: Value) {
    guard let storage else { return }
    CacheBindings.asCache(id) {
      storage.keepError(nil)
      storage.overwrite(.loaded(value))
      storage.publishActivity()
    }
  }

  override var declaredOptions: LoadOptions.Resolved? { storage?.declaredOptions }

  override func startLoad(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions = LoadOptions(), priority: TaskPriority?
  ) -> Task<Void, Never> {
    guard let storage else { return KeyPathTargetEnded.task }
    return CacheBindings.asCache(id) {
      storage.start(plan, silently: silently, options: options, priority: priority)
    }
  }

  override func startAwaitedLoad(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions = LoadOptions()
  ) -> AwaitedLoad {
    guard let storage else { return AwaitedLoad(task: KeyPathTargetEnded.task, forwardsCancellation: false) }
    return CacheBindings.asCache(id) { storage.startAwaited(plan, silently: silently, options: options) }
  }
}

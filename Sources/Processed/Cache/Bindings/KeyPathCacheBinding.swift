/// A key-path state of a class bound to a cache entry (a plain stored property, not a wrapper).
///
/// A write the library does not see (`model.x = …` on a plain property) does not unbind it; `cancel(\.x)`,
/// `reset(\.x)` and the state's next load do.
@usableFromInline @MainActor
final class KeyPathCacheBinding<Model: AnyObject, Value: Sendable>: CacheBinding<Value> {
  weak var model: Model?
  let keyPath: ReferenceWritableKeyPath<Model, State>

  init(_ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>) {
    self.model = model
    self.keyPath = keyPath
    super.init(id: BoundStateID(model, keyPath))
  }

  /// The state's binding: the one it has, else a new one (not bound yet).
  @usableFromInline
  static func of(_ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>) -> KeyPathCacheBinding {
    if let bound = CacheBindings.table[BoundStateID(model, keyPath)] as? KeyPathCacheBinding, bound.model === model {
      return bound
    }
    return KeyPathCacheBinding(model, keyPath)
  }

  override var isAlive: Bool { model != nil }

  override func showAtOnce(_ value: Value, version: UInt64) {
    guard let model else { return }
    let host =
      KeyPathHost.running(model, keyPath)
      ?? KeyPathHost(
        model: model, keyPath: keyPath, key: KeyPathHostKey(model, keyPath), access: KeyPathAccess(keyPath))
    // A plain property's own writes (`model.x = …`) do not unbind it, so no version can tell that the state still
    // shows the entry's value: it shows it when it compares equal to it (a value that is not `Equatable` is written
    // again).
    let shows = valuesAreKnownEqual(State.loaded(value), model[keyPath: keyPath])
    CacheBindings.asCache(id) {
      host.keepError(nil)
      if shows { host.cancelLoad(restoring: false) } else { host.overwrite(.loaded(value)) }
      host.publishActivity()
    }
    shownVersion = version
  }

  override func host() -> (any StateHost<State>)? {
    guard let model else { return nil }
    return KeyPathHost.running(model, keyPath)
      ?? KeyPathHost(
        model: model, keyPath: keyPath, key: KeyPathHostKey(model, keyPath), access: KeyPathAccess(keyPath))
  }

  override func startHostLoad(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never> {
    guard let model else { return KeyPathTargetEnded.task }
    return CacheBindings.asCache(id) {
      let host = KeyPathHost.forLoad(model, keyPath, KeyPathAccess(keyPath))
      return host.start(
        plan, silently: silently, options: Self.waitingOptions(options, on: host), priority: priority)
    }
  }

  override func startHostAwaitedLoad(_ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?) -> AwaitedLoad {
    guard let model else { return AwaitedLoad(task: KeyPathTargetEnded.task, forwardsCancellation: false) }
    return CacheBindings.asCache(id) {
      let host = KeyPathHost.forLoad(model, keyPath, KeyPathAccess(keyPath))
      return host.startAwaited(plan, silently: silently, options: Self.waitingOptions(options, on: host))
    }
  }
}

/// A load or refresh of a state from a ``LoadCache`` entry: what the cached faces of ``LoadableController`` and
/// ``LoadableSupport`` share.
///
/// The call binds the state to the key's entry (leaving any earlier one). A fresh value is written at once and
/// nothing runs. Otherwise the state shows the entry's value at once, if it has one, and starts a load that waits for
/// the entry's fetch — joining the fetch in flight, or starting one (`refresh` always restarts it) — whose outcome
/// the entry writes to every bound state.
@MainActor
enum CachedLoad {
  /// The Task form: the returned task ends when the fetch the call started or joined has ended.
  static func start<Value>(
    _ binding: CacheBinding<Value>, key: CacheKey<Value>, cache: LoadCache, silently: Bool, options: LoadOptions?,
    priority: TaskPriority?, refreshing: Bool, block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    let options = options ?? binding.declaredOptions ?? .default
    if let join = joinRunning(binding, options: options, priority: priority) { return join }
    guard let (entry, silently) = bind(binding, key, cache, silently, options, refreshing, block) else {
      return KeyPathTargetEnded.task
    }
    let task = binding.startLoad(binding.waitingPlan(), silently: silently, priority: priority)
    binding.noteWaitingLoad()
    fetchIfNeeded(entry, refreshing: refreshing, block: block, options: options, priority: priority)
    return task
  }

  /// The `async` form: returns when the fetch the call started or joined has ended.
  static func run<Value>(
    _ binding: CacheBinding<Value>, key: CacheKey<Value>, cache: LoadCache, silently: Bool, options: LoadOptions?,
    refreshing: Bool, block: @escaping @MainActor () async throws -> Value
  ) async {
    let options = options ?? binding.declaredOptions ?? .default
    if let join = joinRunning(binding, options: options, priority: nil) {
      await AwaitedLoad(task: join, forwardsCancellation: true).wait()
      return
    }
    guard let (entry, silently) = bind(binding, key, cache, silently, options, refreshing, block) else { return }
    let load = binding.startAwaitedLoad(binding.waitingPlan(), silently: silently)
    binding.noteWaitingLoad()
    fetchIfNeeded(entry, refreshing: refreshing, block: block, options: options, priority: nil)
    await load.wait()
  }

  /// With `.joinRunning`, a call made while the state's own load is in progress joins it and does nothing to the
  /// cache (see `StateHost.startShaped`).
  private static func joinRunning<Value>(
    _ binding: CacheBinding<Value>, options: LoadOptions, priority: TaskPriority?
  ) -> Task<Void, Never>? {
    guard options.overlap == .joinRunning, let host = binding.host(), host.tracker.isRunning,
      host.tracker.task?.isCancelled != true
    else { return nil }
    let ended = FirstSignal<Bool>()
    host.tracker.joiners.append(ended)
    return Task(priority: priority) { await LoadJoin.wait(until: ended) }
  }

  /// Binds the state and writes what the entry has. Returns `nil` after a fresh hit (the call is done), else the
  /// entry and whether the waiting load writes no `.loading`.
  private static func bind<Value>(
    _ binding: CacheBinding<Value>, _ key: CacheKey<Value>, _ cache: LoadCache, _ silently: Bool,
    _ options: LoadOptions, _ refreshing: Bool, _ block: @escaping @MainActor () async throws -> Value
  ) -> (CacheEntry<Value>, Bool)? {
    guard let host = binding.host() else { return nil }
    let entry = cache.makeEntry(for: key)
    // Leaving the entry it is bound to anyway must not cancel that entry's fetch: it is about to wait for it again.
    if let earlier = CacheBindings.table[binding.id] {
      if let same = earlier as? CacheBinding<Value>, same.entry === entry {
        entry.rebind(same)
      } else {
        earlier.unbind()
      }
    }
    entry.bind(binding, block: block, options: options)
    if let value = entry.value {
      let fresh = !refreshing && entry.isFresh(staleTime: options.staleTime ?? cache.staleTime)
      CacheBindings.asCache {
        if fresh { host.cancelLoad() }
        host.keepError(nil)
        host.overwrite(.loaded(value))
        host.publishActivity()
      }
      if fresh { return nil }
      return (entry, true)
    }
    return (entry, silently)
  }

  private static func fetchIfNeeded<Value>(
    _ entry: CacheEntry<Value>, refreshing: Bool, block: @escaping @MainActor () async throws -> Value,
    options: LoadOptions, priority: TaskPriority?
  ) {
    if refreshing || !entry.isFetching { entry.fetch(block, options: options, priority: priority) }
  }
}

extension LoadableController {
  /// The binding of this controller's state to a cache entry; `nil` when its model is gone.
  @inlinable
  func cacheBinding() -> CacheBinding<Value>? {
    switch target {
    case .storage(let storage): StorageCacheBinding.of(storage)
    case .keyPath(let target): target.makeCacheBinding(Value.self)
    }
  }

  /// Loads the state from `key`'s entry in `cache`, and returns the load's task.
  ///
  /// The state is bound to the entry: every later write of the entry (a fetch, ``LoadCache/set(_:for:)``, an
  /// invalidation's refetch) reaches it, until its next load, ``cancel()``, ``reset()`` or a manual write. Then:
  /// - a **fresh** value (written less than `staleTime` ago, not invalidated) is written as `.loaded(value)` inside the
  ///   call; `block` does not run and the returned task has nothing to do;
  /// - a **stale** value is written at once and fetched again in the background (no `.loading`; ``activity`` shows
  ///   the fetch; a failure keeps the value and sets ``LoadActivity/lastError``);
  /// - **no value**: an ordinary load whose result is the entry's.
  ///
  /// A fetch of the key in flight — started by any state — is joined: `block` does not run.
  ///
  /// ```swift
  /// $profile.load(.profile(id), in: cache) { [api] in try await api.profile(id) }
  /// ```
  ///
  /// > Warning: While the state is bound, the entry keeps the block of its last fetch (to fetch again when it is
  /// > invalidated): capture what the fetch needs, not the model, or the model stays alive through the cache.
  ///
  /// - Parameters:
  ///   - key: The entry's key; its value type is the state's.
  ///   - cache: The cache.
  ///   - silently: When `true`, a miss does not write `.loading` first.
  ///   - options: The fetch's options (retry, timeout, limiter, clock) and `staleTime`; `nil`: the declaration's.
  ///   - priority: The priority of the fetch's task.
  ///   - block: Fetches the value, or throws.
  /// - Returns: A task that ends when the fetch the call started or joined has ended.
  @discardableResult
  @inlinable
  public func load(
    _ key: CacheKey<Value>,
    in cache: LoadCache,
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    if case .storage(let storage) = target,
      CachedLoad.freshHit(storage, key: key, cache: cache, options: options, block: block)
    {
      return CachedLoad.finishedTask
    }
    return startCached(key, in: cache, silently: silently, options: options, priority: priority, block: block)
  }

  /// ``load(_:in:silently:options:priority:block:)`` past the fresh hit of a bound wrapper state.
  @inlinable
  func startCached(
    _ key: CacheKey<Value>, in cache: LoadCache, silently: Bool, options: LoadOptions?, priority: TaskPriority?,
    block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    guard let binding = cacheBinding() else { return KeyPathTargetEnded.task }
    return CachedLoad.start(
      binding, key: key, cache: cache, silently: silently, options: options, priority: priority, refreshing: false,
      block: block)
  }

  /// Loads the state from `key`'s entry in `cache`, and returns when the fetch it started or joined has ended (at
  /// once after a fresh hit). See the Task form, ``load(_:in:silently:options:priority:block:)``.
  ///
  /// ```swift
  /// await $profile.load(.profile(id), in: cache) { try await api.profile(id) }
  /// ```
  ///
  /// - Parameters:
  ///   - key: The entry's key.
  ///   - cache: The cache.
  ///   - silently: When `true`, a miss does not write `.loading` first.
  ///   - options: The fetch's options and `staleTime`; `nil`: the declaration's.
  ///   - block: Fetches the value, or throws.
  @inlinable
  public consuming func load(
    _ key: CacheKey<Value>,
    in cache: LoadCache,
    silently: Bool = false,
    options: LoadOptions? = nil,
    block: @escaping @MainActor () async throws -> Value
  ) async {
    if case .storage(let storage) = target,
      CachedLoad.freshHit(storage, key: key, cache: cache, options: options, block: block)
    {
      return
    }
    await runCached(key, in: cache, silently: silently, options: options, block: block)
  }

  /// ``load(_:in:silently:options:block:)`` past the fresh hit of a bound wrapper state.
  @inlinable
  consuming func runCached(
    _ key: CacheKey<Value>, in cache: LoadCache, silently: Bool, options: LoadOptions?,
    block: @escaping @MainActor () async throws -> Value
  ) async {
    guard let binding = cacheBinding() else { return }
    _ = consume self  // wait without holding the state
    await CachedLoad.run(
      binding, key: key, cache: cache, silently: silently, options: options, refreshing: false, block: block)
  }

  /// Binds the state to `key`'s entry in `cache` like ``load(_:in:silently:options:priority:block:)``, writes the
  /// entry's value at once if it has one, and always fetches: a fetch in flight is cancelled and started again, so
  /// the answer written was asked for after the refresh. Returns the load's task.
  ///
  /// ```swift
  /// $profile.refresh(.profile(id), in: cache) { try await api.profile(id) }  // pull to refresh
  /// ```
  ///
  /// - Parameters:
  ///   - key: The entry's key.
  ///   - cache: The cache.
  ///   - options: The fetch's options; `nil`: the declaration's.
  ///   - priority: The priority of the fetch's task.
  ///   - block: Fetches the value, or throws.
  /// - Returns: A task that ends when the fetch has ended.
  @discardableResult
  public func refresh(
    _ key: CacheKey<Value>,
    in cache: LoadCache,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    guard let binding = cacheBinding() else { return KeyPathTargetEnded.task }
    return CachedLoad.start(
      binding, key: key, cache: cache, silently: false, options: options, priority: priority, refreshing: true,
      block: block)
  }

  /// ``refresh(_:in:options:priority:block:)``, returning when the fetch has ended.
  ///
  /// ```swift
  /// await $profile.refresh(.profile(id), in: cache) { try await api.profile(id) }
  /// ```
  ///
  /// - Parameters:
  ///   - key: The entry's key.
  ///   - cache: The cache.
  ///   - options: The fetch's options; `nil`: the declaration's.
  ///   - block: Fetches the value, or throws.
  public consuming func refresh(
    _ key: CacheKey<Value>,
    in cache: LoadCache,
    options: LoadOptions? = nil,
    block: @escaping @MainActor () async throws -> Value
  ) async {
    guard let binding = cacheBinding() else { return }
    _ = consume self  // wait without holding the state
    await CachedLoad.run(
      binding, key: key, cache: cache, silently: false, options: options, refreshing: true, block: block)
  }
}

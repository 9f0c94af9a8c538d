extension LoadableSupport {
  /// The binding of the state at `keyPath` to a cache entry.
  @MainActor @inlinable
  func cacheBinding<Value: Sendable>(
    _ keyPath: ReferenceWritableKeyPath<Self, LoadableState<Value>>
  ) -> CacheBinding<Value> {
    if let storage = WrapperLookup.read(self, keyPath).storage { return StorageCacheBinding.of(storage) }
    return KeyPathCacheBinding.of(self, keyPath)
  }

  /// Loads the state at `state` from `key`'s entry in `cache`, and returns the load's task: a fresh value is written
  /// at once and `block` does not run; a stale one is written at once and fetched again in the background; with no
  /// value it is an ordinary load whose result is the entry's. See ``LoadableController/load(_:in:silently:options:priority:block:)``.
  ///
  /// ```swift
  /// load(\.profile, key: .profile(id), in: cache) { try await api.profile(id) }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - key: The entry's key; its value type is the state's.
  ///   - cache: The cache.
  ///   - silently: When `true`, a miss does not write `.loading` first.
  ///   - options: The fetch's options and `staleTime`; `nil`: `.default`, or a `@Loadable` property's declaration
  ///     options.
  ///   - priority: The priority of the fetch's task.
  ///   - block: Fetches the value, or throws.
  /// - Returns: A task that ends when the fetch the call started or joined has ended.
  @MainActor
  @discardableResult
  @inlinable
  public func load<Value: Sendable>(
    _ state: ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    key: CacheKey<Value>,
    in cache: LoadCache,
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    if freshHit(state, key: key, cache: cache, options: options, block: block) { return CachedLoad.finishedTask }
    return startCached(
      state, key: key, in: cache, silently: silently, options: options, priority: priority, block: block)
  }

  /// Whether a cached load of `state` is a fresh hit of a `@Loadable` property already bound to `key`'s entry: then it
  /// has shown the entry's value and nothing more runs (`CachedLoad.freshHit`).
  @MainActor
  @inlinable @inline(__always)
  func freshHit<Value: Sendable>(
    _ state: ReferenceWritableKeyPath<Self, LoadableState<Value>>, key: CacheKey<Value>, cache: LoadCache,
    options: LoadOptions?, block: @escaping @MainActor () async throws -> Value
  ) -> Bool {
    guard let storage = WrapperLookup.read(self, state).storage else { return false }
    return CachedLoad.freshHit(storage, key: key, cache: cache, options: options, block: block)
  }

  /// ``load(_:key:in:silently:options:priority:block:)`` past the fresh hit of a bound wrapper state.
  @MainActor
  @inlinable
  func startCached<Value: Sendable>(
    _ state: ReferenceWritableKeyPath<Self, LoadableState<Value>>, key: CacheKey<Value>, in cache: LoadCache,
    silently: Bool, options: LoadOptions?, priority: TaskPriority?,
    block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    CachedLoad.start(
      cacheBinding(state), key: key, cache: cache, silently: silently, options: options, priority: priority,
      refreshing: false, block: block)
  }

  /// ``load(_:key:in:silently:options:priority:block:)``, returning when the fetch it started or joined has ended.
  ///
  /// ```swift
  /// await load(\.profile, key: .profile(id), in: cache) { try await api.profile(id) }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - key: The entry's key.
  ///   - cache: The cache.
  ///   - silently: When `true`, a miss does not write `.loading` first.
  ///   - options: The fetch's options and `staleTime`.
  ///   - block: Fetches the value, or throws.
  @MainActor
  @inlinable
  public func load<Value: Sendable>(
    _ state: ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    key: CacheKey<Value>,
    in cache: LoadCache,
    silently: Bool = false,
    options: LoadOptions? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Value
  ) async {
    if freshHit(state, key: key, cache: cache, options: options, block: block) { return }
    await runCached(state, key: key, in: cache, silently: silently, options: options, block: block)
  }

  /// ``load(_:key:in:silently:options:block:)`` past the fresh hit of a bound wrapper state.
  @MainActor
  @inlinable
  func runCached<Value: Sendable>(
    _ state: ReferenceWritableKeyPath<Self, LoadableState<Value>>, key: CacheKey<Value>, in cache: LoadCache,
    silently: Bool, options: LoadOptions?, block: @escaping @MainActor () async throws -> Value
  ) async {
    await CachedLoad.run(
      cacheBinding(state), key: key, cache: cache, silently: silently, options: options, refreshing: false,
      block: block)
  }

  /// Binds the state at `state` to `key`'s entry, writes the entry's value at once if it has one, and always
  /// fetches (a fetch in flight is restarted). See ``LoadableController/refresh(_:in:options:priority:block:)``.
  ///
  /// ```swift
  /// refresh(\.profile, key: .profile(id), in: cache) { try await api.profile(id) }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - key: The entry's key.
  ///   - cache: The cache.
  ///   - options: The fetch's options.
  ///   - priority: The priority of the fetch's task.
  ///   - block: Fetches the value, or throws.
  /// - Returns: A task that ends when the fetch has ended.
  @MainActor
  @discardableResult
  public func refresh<Value: Sendable>(
    _ state: ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    key: CacheKey<Value>,
    in cache: LoadCache,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    CachedLoad.start(
      cacheBinding(state), key: key, cache: cache, silently: false, options: options, priority: priority,
      refreshing: true, block: block)
  }

  /// ``refresh(_:key:in:options:priority:block:)``, returning when the fetch has ended.
  ///
  /// ```swift
  /// await refresh(\.profile, key: .profile(id), in: cache) { try await api.profile(id) }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - key: The entry's key.
  ///   - cache: The cache.
  ///   - options: The fetch's options.
  ///   - block: Fetches the value, or throws.
  @MainActor
  public func refresh<Value: Sendable>(
    _ state: ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    key: CacheKey<Value>,
    in cache: LoadCache,
    options: LoadOptions? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Value
  ) async {
    await CachedLoad.run(
      cacheBinding(state), key: key, cache: cache, silently: false, options: options, refreshing: true, block: block)
  }
}

extension IsolatedLoadableController {
  /// Loads the state from `key`'s entry in `cache`, and returns the load's task — the rules of
  /// `LoadableController.load(_:in:silently:options:priority:block:)`, for a state owned by an actor.
  ///
  /// The state is bound to the entry: every later write of the entry (a fetch by any state or caller, a `set`, an
  /// invalidation's refetch, a mutation) reaches it, written and observed on the owning actor, in the order the
  /// entry's outcomes happened, until its next load, `cancel()`, `reset()` or a manual write. A fresh value is shown
  /// and nothing is fetched; a stale value is shown and fetched again in the background; a miss starts the entry's
  /// fetch or joins the one in flight. `block` runs on the owning actor.
  ///
  /// ```swift
  /// actor FeedService {
  ///   @IsolatedLoadable var feed: LoadableState<[String]> = .absent
  ///   let cache: LoadCache
  ///   init(cache: LoadCache) { self.cache = cache }
  ///
  ///   func show() {
  ///     $feed.load(CacheKey<[String]>("feed"), in: cache) { ["first post"] }
  ///   }
  /// }
  /// ```
  ///
  /// Before it returns, on the owner, the call supersedes the state's own load and writes what the cache's entries,
  /// as this actor can see them without waiting, tell it: the entry's value, else `.loading` (unless `silently`, or
  /// `loadingDelay` delays it). Until an actor-owned state or a `value(for:options:fetch:)` caller first reads the
  /// cache, its entries are not visible from here: that first call writes `.loading`, and the entry's value follows at
  /// once from the main actor; from then on every entry of the cache is.
  ///
  /// - Parameters:
  ///   - key: The entry's key.
  ///   - cache: The cache.
  ///   - silently: When `true`, a miss does not write `.loading` first.
  ///   - options: The fetch's options and `staleTime` (and the calm-presentation options); `nil`: the declaration's.
  ///   - priority: The priority of the load's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Fetches the value, or throws. Runs on the owning actor.
  /// - Returns: A task that ends when the fetch the call started or joined has ended and the state shows its outcome.
  @discardableResult
  public func load(
    _ key: CacheKey<Value>,
    in cache: LoadCache,
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Value
  ) -> Task<Void, Never> {
    storage.startCached(
      key, in: cache, silently: silently, options: options, priority: priority, refreshing: false,
      isolation: isolation, block: block)
  }

  /// Loads the state from `key`'s entry in `cache`, and returns when the fetch it started or joined has ended and the
  /// state shows its outcome. See the Task form. Cancelling the caller cancels the load.
  ///
  /// ```swift
  /// await $feed.load(CacheKey<[String]>("feed"), in: cache) { try await api.feed() }
  /// ```
  ///
  /// - Parameters:
  ///   - key: The entry's key.
  ///   - cache: The cache.
  ///   - silently: When `true`, a miss does not write `.loading` first.
  ///   - options: The fetch's options and `staleTime`; `nil`: the declaration's.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Fetches the value, or throws. Runs on the owning actor.
  public consuming func load(
    _ key: CacheKey<Value>,
    in cache: LoadCache,
    silently: Bool = false,
    options: LoadOptions? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Value
  ) async {
    let task = storage.startCached(
      key, in: cache, silently: silently, options: options, priority: nil, refreshing: false,
      isolation: isolation, block: block)
    _ = consume self  // waits without keeping the state alive
    await waitForMirrored(task)
  }

  /// Binds the state to `key`'s entry in `cache`, shows the entry's value at once if it has one, and always fetches —
  /// the rules of `LoadableController.refresh(_:in:options:priority:block:)`. Returns the load's task.
  ///
  /// ```swift
  /// $feed.refresh(CacheKey<[String]>("feed"), in: cache) { try await api.feed() }
  /// ```
  ///
  /// - Parameters:
  ///   - key: The entry's key.
  ///   - cache: The cache.
  ///   - options: The fetch's options; `nil`: the declaration's.
  ///   - priority: The priority of the load's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Fetches the value, or throws. Runs on the owning actor.
  /// - Returns: A task that ends when the fetch has ended and the state shows its outcome.
  @discardableResult
  public func refresh(
    _ key: CacheKey<Value>,
    in cache: LoadCache,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Value
  ) -> Task<Void, Never> {
    storage.startCached(
      key, in: cache, silently: false, options: options, priority: priority, refreshing: true,
      isolation: isolation, block: block)
  }

  /// ``refresh(_:in:options:priority:isolation:block:)``, returning when the fetch has ended and the state shows its
  /// outcome.
  ///
  /// ```swift
  /// await $feed.refresh(CacheKey<[String]>("feed"), in: cache) { try await api.feed() }
  /// ```
  ///
  /// - Parameters:
  ///   - key: The entry's key.
  ///   - cache: The cache.
  ///   - options: The fetch's options; `nil`: the declaration's.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Fetches the value, or throws. Runs on the owning actor.
  public consuming func refresh(
    _ key: CacheKey<Value>,
    in cache: LoadCache,
    options: LoadOptions? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Value
  ) async {
    let task = storage.startCached(
      key, in: cache, silently: false, options: options, priority: nil, refreshing: true, isolation: isolation,
      block: block)
    _ = consume self  // waits without keeping the state alive
    await waitForMirrored(task)
  }
}

/// A shared cache of loaded values, one per ``CacheKey``, for every state that shows it.
///
/// Two screens that show the same thing load it into the same entry: the first load fetches, the second joins the
/// fetch, and both show the answer. A value written less than `staleTime` ago is *fresh* — a load writes it at once
/// and runs no block; an older one is *stale* — a load writes it at once and fetches in the background, with no
/// `.loading`. An entry no state is bound to is removed `gcTime` after it became so. All time is on the cache's clock.
///
/// ```swift
/// extension CacheKey where Value == Profile {
///   static func profile(_ id: Int) -> Self { CacheKey("profile", id) }
/// }
///
/// let cache = LoadCache(staleTime: .seconds(30))
///
/// @MainActor
/// final class ProfileScreen {
///   @Loadable var profile: LoadableState<Profile>
///
///   func appear(id: Int) {
///     $profile.load(.profile(id), in: cache) { try await api.profile(id) }
///   }
/// }
/// ```
///
/// `set(_:for:)`, `invalidate(_:)`, `remove(_:)` and `removeAll()` act on the entry and on every state bound to it;
/// a fetch started before any of them never writes. Keep the cache as long as the screens that use it: when its last
/// reference goes, it acts as `removeAll()` on the main actor soon after. See <doc:SharingAValueBetweenScreens>.
///
/// Every method may be called from any isolation — the main actor, another actor, a detached task — and the calls
/// take effect as if they ran one at a time, in an order that keeps each caller's own (linearizable). The entries live
/// on the main actor: a call made there runs at once. A write (`set`, `invalidate…`, `remove…`) made elsewhere returns
/// at once: it is queued in call order and run by the main actor before any later call of the cache. A read
/// (`value(for:)`, `count`) is the main actor's: from elsewhere, `await` it; it sees every call made before it. No call
/// blocks a thread, but the program must let the main actor run (an app, or an `async` `main`).
///
/// ```swift
/// actor Inbox {
///   let cache: LoadCache
///   init(cache: LoadCache) { self.cache = cache }
///
///   func received(_ count: Int) async -> Int? {
///     cache.set(count, for: CacheKey<Int>("unread"))  // no await: returns at once
///     return await cache.value(for: CacheKey<Int>("unread"))  // the main actor's read: sees the set
///   }
/// }
/// ```
public final class LoadCache: Sendable {
  /// How long a written value stays fresh (a load's `LoadOptions.staleTime` may say otherwise).
  public let staleTime: Duration
  /// How long an entry with no bound state and no fetch is kept.
  public var gcTime: Duration { store.gcTime }
  /// The cache's clock (the store's, kept here too for the fresh hit, which reads it without reaching the store).
  @usableFromInline let clock: CacheClock
  /// The entries and everything done to them (see ``CacheStore``).
  @usableFromInline let store: CacheStore

  /// Creates a cache.
  ///
  /// ```swift
  /// let cache = LoadCache(staleTime: .seconds(60), gcTime: .seconds(600))
  /// let testCache = LoadCache(clock: testClock)  // in tests: a TestClock from ProcessedTesting
  /// ```
  ///
  /// - Parameters:
  ///   - staleTime: How long a written value stays fresh. Default: zero — every load of a key fetches again in
  ///     the background, showing the value it has meanwhile (as TanStack Query).
  ///   - gcTime: How long an entry that no state is bound to, and that is not fetching, is kept. Default: 5 minutes.
  ///   - revalidationThrottle: At most one refetch per entry in this window when focus or the network returns
  ///     (``setFocused(_:)``, ``setOnline(_:)``). Default: 5 seconds.
  ///   - storage: Where the values of persisted keys (``CacheKey/persisted()``) are kept between launches; `nil` (the
  ///     default): nothing is kept. See <doc:PersistingTheCache>.
  ///   - clock: The clock staleness, garbage collection, the throttle, polling and the storage's write interval are
  ///     measured on.
  public init(
    staleTime: Duration = .zero, gcTime: Duration = .seconds(300), revalidationThrottle: Duration = .seconds(5),
    storage: (any CacheStorage)? = nil, clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.staleTime = staleTime
    let cacheClock = CacheClock(clock)
    self.clock = cacheClock
    let (events, continuation) = AsyncStream.makeStream(of: StorageEvent.self, bufferingPolicy: .unbounded)
    storageEvents = events
    let persistence = storage.map { CachePersistence(storage: $0, events: continuation, clock: cacheClock) }
    if persistence == nil { continuation.finish() }
    store = CacheStore(
      staleTime: staleTime, gcTime: gcTime, revalidationThrottle: revalidationThrottle, clock: cacheClock,
      persistence: persistence)
  }

  /// What happened between the cache and its storage — records restored, dropped as unreadable, writes that failed —
  /// in order, buffered for one consumer. It ends after the cache is released and its last writes are done; a cache
  /// without storage has an empty stream.
  ///
  /// ```swift
  /// Task {
  ///   for await event in cache.storageEvents { log.info("storage: \(event)") }
  /// }
  /// ```
  public let storageEvents: AsyncStream<StorageEvent>

  /// Performs every pending storage write now and returns when the storage has every write and removal asked for so
  /// far. Call it when the app goes to the background. Callable from any isolation.
  ///
  /// ```swift
  /// .onChange(of: scenePhase) { _, phase in
  ///   if phase == .background { Task { await cache.flush() } }
  /// }
  /// ```
  public func flush() async {
    await store.flush()
  }

  /// A cache may go on any thread: its store is closed on the main actor (its entries removed as by `removeAll()`,
  /// its collector stopped), which ends the cycles through which entries and the collector hold it.
  deinit {
    let store = store
    Task { @MainActor in store.close() }
  }

  /// The value of `key`, if the cache has one (fresh or stale). Reading it does not keep the entry.
  ///
  /// ```swift
  /// let profile = cache.value(for: .profile(42))
  /// ```
  @MainActor @inlinable
  public func value<V>(for key: CacheKey<V>) -> V? {
    store.runQueuedCalls()
    return store.value(for: key)
  }

  /// Writes `value` for `key` (fresh from now) and `.loaded(value)` to every state bound to it, at once. A fetch of
  /// `key` in flight is superseded: it never writes.
  ///
  /// ```swift
  /// cache.set(updatedProfile, for: .profile(42))
  /// ```
  @inlinable
  public func set<V>(_ value: V, for key: CacheKey<V>) {
    store.perform((value, key)) { $0.set($1.0, for: $1.1) }
  }

  /// Marks `key`'s value stale. When states are bound to it, it fetches again at once (with the block and options
  /// of its last fetch); otherwise it fetches on its next load. A fetch in flight is superseded.
  ///
  /// ```swift
  /// cache.invalidate(.profile(42))
  /// ```
  @inlinable
  public func invalidate<V>(_ key: CacheKey<V>) {
    store.perform(key) { $0.invalidate($1) }
  }

  /// Invalidates every key whose components start with `prefix`, of every value type; an empty prefix matches every
  /// key. Finds them without scanning every entry.
  ///
  /// ```swift
  /// cache.invalidate(prefix: "posts")     // CacheKey("posts", 1), CacheKey("posts", 2, "comments"), …
  /// ```
  public func invalidate(prefix: any Hashable & Sendable...) {
    store.perform(prefix) { store, prefix in store.invalidate(prefix: prefix.map { AnyHashable($0) }) }
  }

  /// Invalidates every key.
  ///
  /// ```swift
  /// cache.invalidateAll()  // after signing in as someone else
  /// ```
  public func invalidateAll() {
    store.perform(()) { store, _ in store.invalidateAll() }
  }

  /// Removes `key`'s entry: its fetch never writes, and its states are unbound and keep showing what they show.
  ///
  /// ```swift
  /// cache.remove(.profile(42))
  /// ```
  @inlinable
  public func remove<V>(_ key: CacheKey<V>) {
    store.perform(key) { $0.remove($1) }
  }

  /// Removes every entry (see ``remove(_:)``).
  ///
  /// ```swift
  /// cache.removeAll()  // on sign-out
  /// ```
  public func removeAll() {
    store.perform(()) { store, _ in store.removeAll() }
  }

  /// How many entries exist: keys with a value, a last error, a bound state or a fetch in flight.
  ///
  /// ```swift
  /// print(cache.count)
  /// ```
  @MainActor
  public var count: Int {
    store.runQueuedCalls()
    return store.count
  }

  /// Shows `update` applied to `key`'s value at once, runs `operation`, and undoes the update if it fails —
  /// without ever losing to a refetch or to another mutation.
  ///
  /// Every state bound to the key sees the updated value at once, through its normal write path (its activity does
  /// not show a load). While any mutation of the key runs, fetches of it write nothing: their answer may predate the
  /// mutation. When the operation throws — `CancellationError` included — its update is undone: the key shows its base
  /// (the last value written by a fetch or by ``set(_:for:)``) with the updates of the other mutations that have not
  /// failed applied again, in the order they started, and the error is rethrown. When the last running mutation of
  /// the key ends, the key is invalidated once: states bound to it fetch the server's answer.
  ///
  /// ```swift
  /// func post(_ draft: Comment) {
  ///   $save.run {
  ///     try await cache.mutate(.comments(post.id), optimistic: { $0.append(draft) }) {
  ///       try await api.post(draft)
  ///     }
  ///   }
  /// }
  /// ```
  ///
  /// With no value for `key`, `update` is not called and no entry is made; the key is still invalidated at the end.
  /// ``remove(_:)`` and ``removeAll()`` end the key's mutations: one that ends afterwards writes and invalidates
  /// nothing.
  ///
  /// A call returns (or throws) as soon as its own operation ends, whatever the key's other mutations do. A succeeded
  /// mutation's update stays applied after its call returned — it is applied again when another mutation fails or
  /// ``set(_:for:)`` writes a new base — until the end-of-mutations invalidation's fetch replaces it; that is why
  /// `update` is escaping. Only the caller's task cancels `operation`.
  ///
  /// While the cache is offline (``setOnline(_:)``), the update is shown at once and `operation` waits until the
  /// network is back (the bound states' activity does not change); mutations paused this way start in the order they
  /// were called, without waiting for each other. A paused call whose task is cancelled is undone at once and throws
  /// `CancellationError`; its operation never runs.
  ///
  /// From any isolation: `operation` runs where the caller runs (an actor's operation may touch its state), `update`
  /// on the main actor, where the entry and its states are.
  ///
  /// - Parameters:
  ///   - key: The key whose value changes.
  ///   - update: Changes the value in place, as the server will once `operation` succeeds. Runs on the main actor.
  ///   - operation: The request that makes the change. Runs in the caller's isolation.
  /// - Returns: What `operation` returned.
  public nonisolated(nonsending) func mutate<V, R>(
    _ key: CacheKey<V>, optimistic update: @escaping @MainActor (inout V) -> Void,
    operation: nonisolated(nonsending) () async throws -> R
  ) async throws -> R {
    try await store.mutate(key, optimistic: update, operation: operation)
  }

  /// Returns after the collector's next pass (see ``CacheStore/nextCollection()``).
  @MainActor
  func nextCollection() async {
    await store.nextCollection()
  }
}

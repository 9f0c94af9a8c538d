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
/// a fetch started before any of them never writes. See <doc:SharingAValueBetweenScreens>.
public final class LoadCache: Sendable {
  /// How long a written value stays fresh (a load's `LoadOptions.staleTime` may say otherwise).
  public let staleTime: Duration
  /// How long an entry with no bound state and no fetch is kept.
  public let gcTime: Duration
  @usableFromInline let clock: CacheClock

  // The tables are main-actor only and each access is short (none spans a call out): `@exclusivity(unchecked)`
  // (Unsafe/README.md, invariant 1).
  /// The entries, by key.
  @MainActor @exclusivity(unchecked) var entries = CacheKeyIndex<AnyCacheEntry>()
  /// Idle entries in the order they became idle, with their deadlines (all `gcTime` after, so the queue is sorted);
  /// stamp `0`: a check of a bound entry's bindings.
  @MainActor @exclusivity(unchecked) var collectable: [(key: AnyCacheKey, stamp: UInt64, deadline: Duration)] = []
  @MainActor @exclusivity(unchecked) var collectableHead = 0
  @MainActor @exclusivity(unchecked) var lastStamp: UInt64 = 0
  @MainActor var collector: Task<Void, Never>? {
    didSet { collectorForDeinit.withLock { $0 = collector } }
  }
  /// The collector, for `deinit` (a cache may be released on any thread).
  private let collectorForDeinit = LockedBox<Task<Void, Never>?>(nil)
  /// The keys with mutations that have not all ended (see ``mutate(_:optimistic:operation:)``).
  @MainActor @exclusivity(unchecked) var mutations: [AnyCacheKey: AnyKeyMutations] = [:]
  /// Resumed after the collector's next pass (see ``nextCollection()``).
  @MainActor @exclusivity(unchecked) var collectionWaiters: [CheckedContinuation<Void, Never>] = []

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
  ///   - clock: The clock staleness and garbage collection are measured on.
  public init(
    staleTime: Duration = .zero, gcTime: Duration = .seconds(300), clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.staleTime = staleTime
    self.gcTime = gcTime
    self.clock = CacheClock(clock)
  }

  deinit {
    collectorForDeinit.withLock { $0 }?.cancel()
  }

  /// The value of `key`, if the cache has one (fresh or stale). Reading it does not keep the entry.
  ///
  /// ```swift
  /// let profile = cache.value(for: .profile(42))
  /// ```
  @MainActor @inlinable
  public func value<V>(for key: CacheKey<V>) -> V? {
    entry(for: key)?.value
  }

  /// Writes `value` for `key` (fresh from now) and `.loaded(value)` to every state bound to it, at once. A fetch of
  /// `key` in flight is superseded: it never writes.
  ///
  /// ```swift
  /// cache.set(updatedProfile, for: .profile(42))
  /// ```
  @MainActor @inlinable
  public func set<V>(_ value: V, for key: CacheKey<V>) {
    let entry = makeEntry(for: key)
    entry.cancelLoad()
    entry.write(hasMutations ? rebased(value, for: entry.key) : value)
    entry.noteIfIdle(written: true)
  }

  /// Marks `key`'s value stale. When states are bound to it, it fetches again at once (with the block and options
  /// of its last fetch); otherwise it fetches on its next load. A fetch in flight is superseded.
  ///
  /// ```swift
  /// cache.invalidate(.profile(42))
  /// ```
  @MainActor @inlinable
  public func invalidate<V>(_ key: CacheKey<V>) {
    entry(for: key)?.invalidate()
  }

  /// Invalidates every key whose components start with `prefix`, of every value type; an empty prefix matches every
  /// key. Finds them without scanning every entry.
  ///
  /// ```swift
  /// cache.invalidate(prefix: "posts")     // CacheKey("posts", 1), CacheKey("posts", 2, "comments"), …
  /// ```
  @MainActor
  public func invalidate(prefix: any Hashable & Sendable...) {
    let components = prefix.map { AnyHashable($0) }
    for key in entries.keys(withPrefix: components) {
      if let entry = entries[key] { entry.invalidate() }
    }
  }

  /// Invalidates every key.
  ///
  /// ```swift
  /// cache.invalidateAll()  // after signing in as someone else
  /// ```
  @MainActor
  public func invalidateAll() {
    for entry in Array(entries.values) { entry.invalidate() }
  }

  /// Removes `key`'s entry: its fetch never writes, and its states are unbound and keep showing what they show.
  ///
  /// ```swift
  /// cache.remove(.profile(42))
  /// ```
  @MainActor
  @inlinable
  public func remove<V>(_ key: CacheKey<V>) {
    guard let entry = take(key.erased) else { return }
    // The erased key holds `V`'s identity, so the entry stored for it is a `CacheEntry<V>`: dropped specialized.
    unsafeDowncast(entry, to: CacheEntry<V>.self).dropEntry()
  }

  /// Whether any mutation runs (most caches have none: `set` then skips its table).
  @usableFromInline @MainActor
  var hasMutations: Bool { !mutations.isEmpty }

  /// What `set` writes while mutations of the key may run: `value` as the key's new base, with the running mutations'
  /// updates applied again; `value` itself when none runs.
  @usableFromInline @MainActor
  func rebased<V: Sendable>(_ value: V, for erased: AnyCacheKey) -> V {
    guard let log = mutations[erased] as? KeyMutations<V> else { return value }
    log.base = value
    return log.shown ?? value
  }

  /// Removes the entry of `erased` from the cache (and ends its key's mutation bookkeeping) and returns it, for the
  /// caller to drop.
  @usableFromInline @MainActor
  func take(_ erased: AnyCacheKey) -> AnyCacheEntry? {
    if !mutations.isEmpty { mutations.removeValue(forKey: erased)?.isDetached = true }
    return entries.removeValue(forKey: erased)
  }

  /// Removes every entry (see ``remove(_:)``).
  ///
  /// ```swift
  /// cache.removeAll()  // on sign-out
  /// ```
  @MainActor
  public func removeAll() {
    let dropped = Array(entries.values)
    entries.removeAll()
    for log in mutations.values { log.isDetached = true }
    mutations.removeAll()
    collectable.removeAll()
    collectableHead = 0
    for entry in dropped { entry.drop() }
  }

  /// How many entries exist: keys with a value, a last error, a bound state or a fetch in flight.
  ///
  /// ```swift
  /// print(cache.count)
  /// ```
  @MainActor
  public var count: Int { entries.count }

  // MARK: Entries

  @MainActor @inlinable
  func entry<V>(for key: CacheKey<V>) -> CacheEntry<V>? {
    entry(for: key.erased, of: V.self)
  }

  /// The entry of `erased`, a `CacheKey<V>`'s erased form.
  @inlinable @MainActor
  func entry<V>(for erased: AnyCacheKey, of _: V.Type) -> CacheEntry<V>? {
    guard let entry = storedEntry(erased) else { return nil }
    // The erased key holds `V`'s identity, so the entry stored for it is a `CacheEntry<V>`.
    return unsafeDowncast(entry, to: CacheEntry<V>.self)
  }

  @inlinable @MainActor
  func makeEntry<V>(for key: CacheKey<V>) -> CacheEntry<V> {
    // Erased once: the entry, the table and the key index share its components.
    let erased = key.erased
    if let entry = entry(for: erased, of: V.self) { return entry }
    let entry = CacheEntry<V>(key: erased, cache: self)
    insert(entry)
    return entry
  }

  /// Adds `entry`, whose key the cache does not hold yet.
  @usableFromInline @MainActor
  func insert(_ entry: AnyCacheEntry) {
    entries[entry.key] = entry
  }

  /// The entry of `erased`, whatever its value type.
  @usableFromInline @MainActor
  func storedEntry(_ erased: AnyCacheKey) -> AnyCacheEntry? {
    entries[erased]
  }

  // MARK: Garbage collection

  /// Called when an entry may have become idle (no bound state, no fetch), or was written while idle: an entry that
  /// holds nothing goes at once; another is queued to go `gcTime` from now.
  @MainActor
  func entryMayBeIdle(_ entry: AnyCacheEntry, written: Bool = false) {
    guard entry.isIdle else { return }
    entryIsIdle(entry, holdsSomething: entry.holdsSomething, written: written)
  }

  /// ``entryMayBeIdle(_:written:)`` of an entry known to be idle, holding something or not.
  @usableFromInline @MainActor
  func entryIsIdle(_ entry: AnyCacheEntry, holdsSomething: Bool, written: Bool) {
    guard entries[entry.key] === entry else { return }
    if !holdsSomething {
      entries[entry.key] = nil
      return
    }
    if entry.idleStamp != 0, !written { return }
    lastStamp &+= 1
    entry.idleStamp = lastStamp
    collectable.append((entry.key, lastStamp, clock.now() + gcTime))
    if collector == nil { startCollector() }
  }

  /// Queues a check of `entry`'s bindings `gcTime` from now: states whose owner went away without unbinding are
  /// dropped then, so that the entry becomes idle and is collected in turn.
  @usableFromInline @MainActor
  func scheduleBindingCheck(_ entry: AnyCacheEntry) {
    // At least a second apart: with a zero `gcTime`, checks of a bound entry must not follow each other at once.
    collectable.append((entry.key, 0, clock.now() + max(gcTime, .seconds(1))))
    if collector == nil { startCollector() }
  }

  @MainActor
  private func startCollector() {
    let clock = self.clock
    collector = Task { [weak self] in
      while let deadline = self?.nextDeadline() {
        do { try await clock.sleep(deadline) } catch { return }
        self?.collect()
      }
    }
  }

  /// The next deadline; `nil` (and the collector stops) when nothing is queued.
  @MainActor
  private func nextDeadline() -> Duration? {
    guard collectableHead < collectable.count else {
      collectable.removeAll()
      collectableHead = 0
      collector = nil
      return nil
    }
    return collectable[collectableHead].deadline
  }

  /// Removes the entries whose deadline has come and that are still idle since they were queued.
  @MainActor
  private func collect() {
    let now = clock.now()
    let end = collectable.count  // checks queued meanwhile wait for the next round
    while collectableHead < end, collectable[collectableHead].deadline <= now {
      let item = collectable[collectableHead]
      collectableHead += 1
      guard let entry = entries[item.key] else { continue }
      if item.stamp == 0 {
        // A binding check (see `scheduleBindingCheck`).
        entry.dropReleasedBindings()
        if entry.isBound {
          scheduleBindingCheck(entry)
        } else {
          entryMayBeIdle(entry)
        }
      } else if entry.idleStamp == item.stamp, entry.isIdle {
        entries[item.key] = nil
      }
    }
    if collectableHead > 64, collectableHead * 2 > collectable.count {
      collectable.removeFirst(collectableHead)
      collectableHead = 0
    }
    if !collectionWaiters.isEmpty {
      let waiters = collectionWaiters
      collectionWaiters = []
      for waiter in waiters { waiter.resume() }
    }
  }

  /// Returns after the collector's next pass: for a test that just moved the clock past a deadline (registered before
  /// the collector can run, since both are on the main actor).
  @MainActor
  func nextCollection() async {
    await withCheckedContinuation { collectionWaiters.append($0) }
  }
}

import CProcessedAtomics

/// What a ``LoadCache`` holds and does, on the main actor: its entries, their garbage collection and its keys'
/// mutations.
///
/// Entries and the collector hold the store strongly — never weakly: a weak reference would give it a side table,
/// and then every retain and release of it takes the slow path — and the public ``LoadCache`` holds it too. The
/// cycles end when entries leave the store, when the collector's queue empties, and at the latest when the store is
/// closed, which its cache's `deinit` asks for.
@usableFromInline
final class CacheStore: Sendable {
  /// How long an entry with no bound state and no fetch is kept.
  @usableFromInline let gcTime: Duration
  /// The cache's stale time (a call's `LoadOptions.staleTime` may say otherwise).
  let staleTime: Duration
  /// At most one focus or network refetch per entry in this window.
  let revalidationThrottle: Duration
  /// Whether the app is focused and online, as it told the cache (any thread; see ``LoadCache/setFocused(_:)``).
  @usableFromInline let environment = LockedBox(CacheEnvironment())
  /// What the main actor last acted on: a change of ``environment`` is a return when it goes from `false` to `true`.
  @usableFromInline @MainActor @exclusivity(unchecked) var applied = CacheEnvironment()
  /// The entries with a bound state, by identity: what focus and the network revalidate (O(bound entries)).
  @usableFromInline @MainActor @exclusivity(unchecked) var boundEntries: [ObjectIdentifier: AnyCacheEntry] = [:]
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
  /// The collector's task while it runs; it holds the store (see ``close()``).
  @MainActor var collector: Task<Void, Never>?
  /// Set by ``close()``: the store's cache is gone, and nothing is queued for collection any more.
  @MainActor @exclusivity(unchecked) var isClosed = false
  /// The keys with mutations that have not all ended (see ``mutate(_:optimistic:operation:)``).
  @MainActor @exclusivity(unchecked) var mutations: [AnyCacheKey: AnyKeyMutations] = [:]
  /// The key last erased by ``erased(_:)``: a key built for each call (the usual way) is erased once, not each time it
  /// reaches the store (erasing allocates its components' array).
  @usableFromInline @MainActor @exclusivity(unchecked) var lastErased: AnyCacheKey?
  /// The fetches and mutations waiting for the network (``NetworkMode/online`` while offline).
  @MainActor let networkWaiters = NetworkWaiters()
  /// Resumed after the collector's next pass (see ``nextCollection()``).
  @MainActor @exclusivity(unchecked) var collectionWaiters: [CheckedContinuation<Void, Never>] = []

  /// The values `value(for:options:fetch:)` reads off the main actor (see `CacheStore+Published.swift`), and whether
  /// any entry was ever published (a cache that never serves `value(for:)` never takes the lock).
  @usableFromInline let published = LockedBox(PublishedTable())
  @MainActor var hasPublished = false
  /// While a call made off the main actor runs there (``runQueuedCalls()``), when it was made: a value it writes is
  /// written at that time (`set` is fresh from its call, as if it had run then), not at the main actor's turn.
  @usableFromInline @MainActor @exclusivity(unchecked) var queuedCallTime: Duration?
  /// The calls made off the main actor that have not run yet, in the order they were made (see
  /// `CacheStore+OffMain.swift`).
  @usableFromInline let offMain = LockedBox(OffMainCalls())
  /// The cache's storage side, when it was given a ``CacheStorage``.
  @usableFromInline let persistence: CachePersistence?

  init(
    staleTime: Duration, gcTime: Duration, revalidationThrottle: Duration, clock: CacheClock,
    persistence: CachePersistence? = nil
  ) {
    self.staleTime = staleTime
    self.gcTime = gcTime
    self.revalidationThrottle = revalidationThrottle
    self.clock = clock
    self.persistence = persistence
  }

  /// Its cache went: every entry is removed as by `removeAll()` (their fetches never write, their states are unbound
  /// and keep showing what they show), and the collector stops. This ends the cycles through which entries and the
  /// collector hold the store.
  @MainActor
  func close() {
    isClosed = true
    // Releasing a cache never deletes records: entries are dropped without touching the storage.
    dropAll()
    networkWaiters.close()
    persistence?.close()
    collector?.cancel()
    collector = nil
    published.withLock { $0.sweeper }?.cancel()
  }

  /// ``LoadCache/value(for:)``.
  @MainActor @inlinable
  func value<V>(for key: CacheKey<V>) -> V? {
    entry(for: key)?.value
  }

  /// ``LoadCache/set(_:for:)``.
  @MainActor @inlinable
  func set<V>(_ value: V, for key: CacheKey<V>) {
    let entry = makeEntry(for: key)
    entry.cancelLoad()
    if hasMutations {
      entry.write(rebased(value, for: entry.key), base: value)
    } else {
      entry.write(value)
    }
    entry.noteIfIdle(written: true)
  }

  /// ``LoadCache/invalidate(_:)``.
  @MainActor @inlinable
  func invalidate<V>(_ key: CacheKey<V>) {
    entry(for: key)?.invalidate()
  }

  /// ``LoadCache/invalidate(prefix:)``.
  @MainActor
  func invalidate(prefix components: [AnyHashable]) {
    settleAllOffMain()
    for key in entries.keys(withPrefix: components) {
      if let entry = entries[key] { entry.invalidate() }
    }
  }

  /// ``LoadCache/invalidateAll()``.
  @MainActor
  func invalidateAll() {
    settleAllOffMain()
    for entry in Array(entries.values) { entry.invalidate() }
  }

  /// ``LoadCache/remove(_:)``.
  @MainActor
  @inlinable
  func remove<V>(_ key: CacheKey<V>) {
    let erased = erased(key)
    if persistence != nil { removeRecord(of: key, erased) }
    guard let entry = take(erased) else { return }
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
    settleOffMain(erased)
    if !mutations.isEmpty { mutations.removeValue(forKey: erased)?.isDetached = true }
    unpublish(erased)
    return entries.removeValue(forKey: erased)
  }

  /// ``LoadCache/removeAll()``: the entries and every record of the storage.
  @MainActor
  func removeAll() {
    persistence?.removeAll()
    dropAll()
  }

  /// Drops every entry, leaving the storage as it is.
  @MainActor
  func dropAll() {
    settleAllOffMain()
    let dropped = Array(entries.values)
    entries.removeAll()
    unpublishAll()
    for log in mutations.values { log.isDetached = true }
    mutations.removeAll()
    collectable.removeAll()
    collectableHead = 0
    for entry in dropped { entry.drop() }
  }

  /// ``LoadCache/count``.
  @MainActor
  var count: Int {
    settleAllOffMain()
    return entries.count
  }

  // MARK: Entries

  @MainActor @inlinable
  func entry<V>(for key: CacheKey<V>) -> CacheEntry<V>? {
    entry(for: erased(key), of: V.self)
  }

  /// `key`'s erased form: the last one made when `key` is equal to its key, else a new one (kept as the last).
  @inlinable @MainActor
  func erased<V>(_ key: CacheKey<V>) -> AnyCacheKey {
    if let last = lastErased, last.valueType == ObjectIdentifier(V.self), key.storage.matches(last.storage) {
      return last
    }
    let made = key.erased
    lastErased = made
    return made
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
    let erased = erased(key)
    if let entry = entry(for: erased, of: V.self) {
      if let persistence = key.persistence, entry.persisted == nil { adopt(persistence, by: entry, restoring: false) }
      return entry
    }
    let entry = CacheEntry<V>(key: erased, store: self)
    insert(entry)
    // The first load of a persisted key with no entry in memory reads its record.
    if let persistence = key.persistence { adopt(persistence, by: entry, restoring: true) }
    return entry
  }

  /// Adds `entry`, whose key the cache does not hold yet.
  @usableFromInline @MainActor
  func insert(_ entry: AnyCacheEntry) {
    entries[entry.key] = entry
    guard hasPublished else { return }
    // A miss decided off the main actor since the key was looked up here (its work in the table) becomes this entry's.
    if processed_cache_was_used_off_main(), let work = claimOffMain(PublishedKey(entry.key)) {
      work.absorb(into: entry, store: self)
    }
    entry.startPublishing()
  }

  /// The entry of `erased`, whatever its value type.
  @usableFromInline @MainActor
  func storedEntry(_ erased: AnyCacheKey) -> AnyCacheEntry? {
    settleOffMain(erased)
    return entries[erased]
  }

  /// ``settleOffMain(_:)`` of `erased`, when a miss of this cache may have been decided off the main actor.
  @usableFromInline @MainActor
  func settleOffMain(_ erased: AnyCacheKey) {
    guard hasPublished, processed_cache_was_used_off_main() else { return }
    settleOffMain(PublishedKey(erased))
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
      unpublish(entry.key)
      return
    }
    if entry.idleStamp != 0, !written { return }
    lastStamp &+= 1
    entry.idleStamp = lastStamp
    collectable.append((entry.key, lastStamp, clock.now() + gcTime))
    if collector == nil, !isClosed { startCollector() }
  }

  /// Queues a check of `entry`'s bindings `gcTime` from now: states whose owner went away without unbinding are
  /// dropped then, so that the entry becomes idle and is collected in turn.
  @usableFromInline @MainActor
  func scheduleBindingCheck(_ entry: AnyCacheEntry) {
    // At least a second apart: with a zero `gcTime`, checks of a bound entry must not follow each other at once.
    guard !isClosed else { return }
    collectable.append((entry.key, 0, clock.now() + max(gcTime, .seconds(1))))
    if collector == nil { startCollector() }
  }

  @MainActor
  private func startCollector() {
    let clock = self.clock
    // Holds the store (a weak reference would give it a side table, and every retain of it the slow kind) until the
    // queue is empty or the store is closed.
    collector = Task { [self] in
      while let deadline = nextDeadline() {
        do {
          try await HousekeepingSleep.$isActive.withValue(true) { try await clock.sleep(deadline) }
        } catch { return }
        collect()
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
        unpublish(item.key)
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

/// A fresh `value(for:options:fetch:)` hit without a hop to the main actor.
///
/// The entries live on the main actor; a caller elsewhere would hop there and back for every hit (measured: about 70×
/// a `Mutex` lookup). So an entry that `value(for:options:fetch:)` has read (`isPublished`) also keeps its value, write
/// time and invalidation in the store's `published` table, under a lock — and, once any entry of a cache is read off
/// the main actor, every entry of that cache. Invariant: the table changes on the main actor
/// in the same turn as the entry — every write, shown value, restore and invalidation of a published entry updates its
/// row, and an entry leaving the cache (remove, `removeAll`, collection, release) loses its row — so a read of the
/// table is ordered with the cache's other methods as if it ran on the main actor at that moment.
extension CacheStore {
  /// The value of `key` as the published table shows it now, its version, and whether it is fresh for `staleTime`;
  /// `nil` when the entry is not published or holds no value, or a call made off the main actor waits to run there.
  /// Callable from any thread.
  func publishedValue<V>(for key: CacheKey<V>, staleTime: Duration) -> (value: V, version: UInt64, fresh: Bool)? {
    let published = PublishedKey(valueType: ObjectIdentifier(V.self), parts: key.storage)
    guard let row = self.published.withLock({ $0.row(published) }), row.hasValue else { return nil }
    let fresh = Freshness.isFresh(
      writtenAt: row.writtenAt, invalidated: row.invalidated, staleTime: staleTime, now: clock.now())
    return (row.value(as: V.self), row.version, fresh)
  }

  /// `value(for:options:fetch:)` or an actor-owned state read `entry` on the main actor: from now on the changes of
  /// every entry of the cache are published — the entries it holds now, and each one it makes later (``insert(_:)``) —
  /// so that an actor-owned state's next cached load of any key it holds finds its value without a hop.
  @MainActor
  func startPublishing<V>(_ entry: CacheEntry<V>) {
    guard !entry.isPublished else { return }
    guard hasPublished else {
      hasPublished = true
      entries.forEach { _, each in each.startPublishing() }
      // From now on a key without a row has no entry: a miss off the main actor may be decided there.
      published.withLock { $0.isComplete = true }
      return
    }
    entry.startPublishing()
  }

  /// `key`'s entry left the cache: its row goes.
  @usableFromInline @MainActor
  func unpublish(_ key: AnyCacheKey) {
    guard hasPublished else { return }
    _ = published.withLock { $0.rows.removeValue(forKey: PublishedKey(key)) }
  }

  /// Every entry left the cache.
  @MainActor
  func unpublishAll() {
    guard hasPublished else { return }
    published.withLock { $0.rows.removeAll() }
  }
}

extension CacheEntry {
  /// The entry's value, write time and invalidation, as the published table shows them (a published entry, after each
  /// change); an entry without a value has a row that says so (``PublishedValue/absent``).
  @usableFromInline
  func publishValue() {
    let row =
      value.map {
        PublishedValueOf($0, writtenAt: writtenAt, invalidated: invalidated, version: version) as PublishedValue
      } ?? PublishedValue.absent
    let replaced = store.published.withLock { $0.rows.updateValue(row, forKey: PublishedKey(key)) }
    _ = replaced  // Released after the lock: the old value's `deinit` is the user's code.
  }
}

/// The published rows, and how many calls made off the main actor are queued and not yet run there
/// (`CacheStore+OffMain.swift`): while one is, the rows may not show it, so a reader finds nothing and hops to the main
/// actor, which runs the queued calls first. A call counts from before it is queued until after it has run.
///
/// Once ``isComplete``, every entry has a row (one without a value too), so a key without a row has no entry: a miss
/// off the main actor starts its fetch here, in ``offMain``, without the main actor (`CacheStore+OffMainFetches.swift`).
@usableFromInline
struct PublishedTable: Sendable {
  @usableFromInline var rows: [PublishedKey: PublishedValue] = [:]
  @usableFromInline var unappliedCalls = 0
  /// Whether every entry of the cache is published (set once, with the store's `hasPublished`).
  @usableFromInline var isComplete = false
  /// The keys of misses decided off the main actor that have no entry yet: a fetch in flight, or its outcome on its way
  /// to the main actor. Each key here has no entry, and a row only once its fetch has ended.
  @usableFromInline var offMain: [PublishedKey: any OffMainWork] = [:]
  /// Whether the cache was last told the network is reachable (``LoadCache/setOnline(_:)``, which sets it with the
  /// store's `environment`): read with ``offMain``, so that a miss off the main actor takes one lock.
  @usableFromInline var isOnline = true
  /// The outcomes in ``offMain`` with the time their entry would be collected (`gcTime` after their fetch ended), in
  /// the order they ended; an item whose outcome left ``offMain`` meanwhile is skipped.
  @usableFromInline var expiring: [(key: PublishedKey, stamp: UInt64, deadline: Duration)] = []
  /// The last ``OffMainWork/endedStamp`` given.
  @usableFromInline var lastEndedStamp: UInt64 = 0
  @usableFromInline var expiringHead = 0
  /// Whether a task drops expired outcomes (it runs while ``expiring`` has items; `CacheStore+OffMainFetches.swift`),
  /// and the task, to cancel when the store closes.
  @usableFromInline var isSweeping = false
  var sweeper: Task<Void, Never>?

  init() {}

  /// The row of `key`, unless a queued call may change it.
  @inlinable
  func row(_ key: PublishedKey) -> PublishedValue? {
    unappliedCalls == 0 ? rows[key] : nil
  }
}

/// A published entry's value as `value(for:options:fetch:)` reads it off the main actor: one immutable object per
/// change, so that a lookup copies a reference out of the lock (a retain), not the row.
///
/// `@unchecked Sendable`: every field is a `let` of a `Sendable` type (Unsafe/README.md, invariant 12); the class is not
/// final only so that ``PublishedValueOf`` can carry the value with its type.
@usableFromInline
class PublishedValue: @unchecked Sendable {
  /// Whether the row holds a value (a ``PublishedValueOf``); `false`: the row of an entry without one.
  @usableFromInline let hasValue: Bool
  @usableFromInline let writtenAt: Duration
  @usableFromInline let invalidated: Bool
  /// The entry's ``CacheEntry/version`` for this value (what an actor-owned state that shows it compares with).
  @usableFromInline let version: UInt64

  @usableFromInline
  init(hasValue: Bool, writtenAt: Duration, invalidated: Bool, version: UInt64) {
    self.hasValue = hasValue
    self.writtenAt = writtenAt
    self.invalidated = invalidated
    self.version = version
  }

  /// The row of an entry without a value: the key has an entry on the main actor, where a miss of it goes.
  @usableFromInline
  static let absent = PublishedValue(hasValue: false, writtenAt: .zero, invalidated: false, version: 0)

  /// The value, read as a `V`, of a row with ``hasValue``: a row found under a key of `CacheKey<V>` holds a `V` (the
  /// key's value type is part of ``PublishedKey``, and rows are written only by `CacheEntry<V>.publishValue()` and an
  /// `OffMainFetch<V>`'s end, under their own key), so the downcast holds (invariant 11; checked in debug builds).
  @inlinable
  func value<V: Sendable>(as _: V.Type) -> V {
    unsafeDowncast(self, to: PublishedValueOf<V>.self).value
  }
}

/// A ``PublishedValue`` with its value.
@usableFromInline
final class PublishedValueOf<V: Sendable>: PublishedValue, @unchecked Sendable {
  @usableFromInline let value: V

  @inlinable
  init(_ value: V, writtenAt: Duration, invalidated: Bool, version: UInt64) {
    self.value = value
    super.init(hasValue: true, writtenAt: writtenAt, invalidated: invalidated, version: version)
  }
}

/// A published entry's key: its value type and its components in the form a ``CacheKey`` holds them
/// (``CacheKeyParts``), so that a caller's key is looked up without erasing it (which builds an array).
@usableFromInline
struct PublishedKey: Hashable, Sendable {
  @usableFromInline let valueType: ObjectIdentifier
  @usableFromInline let parts: CacheKeyParts

  @inlinable
  init(valueType: ObjectIdentifier, parts: CacheKeyParts) {
    self.valueType = valueType
    self.parts = parts
  }

  /// The key of a stored entry.
  init(_ key: AnyCacheKey) {
    valueType = key.valueType
    let items = key.storage.items
    switch items.count {
    case 1: parts = .one(items[0])
    case 2: parts = .two(items[0], items[1])
    default: parts = .many(key.storage)
    }
  }
}

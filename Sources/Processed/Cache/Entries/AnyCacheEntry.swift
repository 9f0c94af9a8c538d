/// A cache entry, whatever its value type: what the cache's index holds, sweeps and invalidates.
@usableFromInline @MainActor
class AnyCacheEntry {
  @usableFromInline let key: AnyCacheKey
  /// Set when the entry last became idle (see ``LoadCache``'s garbage collection); `0` while it is not idle.
  @usableFromInline @exclusivity(unchecked) var idleStamp: UInt64 = 0

  @usableFromInline
  init(key: AnyCacheKey) {
    self.key = key
  }

  /// Whether the entry has no bound state and no fetch in flight.
  var isIdle: Bool { fatalError("abstract") }
  /// Whether the entry holds a value or a last error (an entry with neither is removed as soon as it is idle).
  var holdsSomething: Bool { fatalError("abstract") }
  /// Marks the value stale; fetches again at once when a state is bound (see ``LoadCache/invalidate(_:)``).
  func invalidate() { fatalError("abstract") }
  /// Whether a state is bound.
  var isBound: Bool { fatalError("abstract") }
  /// Drops the bindings of states whose owner is gone (then acts as if they had left).
  func dropReleasedBindings() { fatalError("abstract") }
  /// The entry leaves its cache: its fetch stops without writing, its states are unbound and keep what they show.
  func drop() { fatalError("abstract") }
  /// Focus or the network returned (see ``CacheEntry/revalidate(now:throttle:focusReturned:)``).
  func revalidate(now: Duration, throttle: Duration, focusReturned: Bool) { fatalError("abstract") }
  /// Focus went: polling that does not go on in the background stops.
  func focusLost() { fatalError("abstract") }
  /// From now on the entry's changes are published for readers off the main actor (see `CacheStore+Published.swift`).
  func startPublishing() { fatalError("abstract") }
}

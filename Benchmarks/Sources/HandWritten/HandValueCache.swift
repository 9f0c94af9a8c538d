// The hand-written baseline of `LoadCache.value(for:)`'s fresh hit: a lock-protected dictionary a careful engineer
// reads from any thread. `@inlinable`, like the rest of this target, so that it is specialized and inlined into the
// benchmark as Processed's code is.
import Synchronization

/// Values by key behind a `Mutex`, each with the instant it was written: a read from any isolation takes the lock,
/// looks the key up and checks the value's age against `staleTime` (one clock read), with no hop to another actor.
/// A key without a fresh value is fetched by the caller's `fetch` and stored (no coalescing: the fresh-hit row never
/// gets there).
public final class HandValueCache: Sendable {
  @usableFromInline let storage = Mutex<[HandCacheKey: (value: Int, written: ContinuousClock.Instant)]>([:])
  @usableFromInline let clock = ContinuousClock()
  /// How long a written value stays fresh.
  public let staleTime: Duration

  /// An empty cache whose values stay fresh for `staleTime`.
  @inlinable
  public init(staleTime: Duration) {
    self.staleTime = staleTime
  }

  /// Writes `value` for `key`, fresh from now.
  @inlinable
  public func set(_ value: Int, for key: HandCacheKey) {
    let now = clock.now
    storage.withLock { $0[key] = (value, now) }
  }

  /// The fresh value of `key`, else the value `fetch` returns, stored.
  @inlinable
  public func value(for key: HandCacheKey, fetch: () async throws -> Int) async rethrows -> Int {
    let now = clock.now
    let fresh: Int? = storage.withLock { values in
      guard let entry = values[key], now < entry.written.advanced(by: staleTime) else { return nil }
      return entry.value
    }
    if let fresh { return fresh }
    let value = try await fetch()
    set(value, for: key)
    return value
  }
}

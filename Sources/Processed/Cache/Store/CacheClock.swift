/// A cache's clock, read as offsets from the moment the cache was made: time stamps and deadlines are `Duration`s,
/// whatever the clock's instant type.
///
/// A class, one per cache: each entry holds its cache's, to read the time without reaching the cache (which it
/// references weakly) and to tell by identity that an entry belongs to a given cache.
@usableFromInline
final class CacheClock: Sendable {
  /// When the cache was made, when its clock is the default `ContinuousClock`: read in place, without a closure call
  /// (a fresh hit reads the time).
  @usableFromInline let continuousOrigin: ContinuousClock.Instant?
  /// How long since the cache was made, on any other clock.
  @usableFromInline let readNow: @Sendable () -> Duration
  /// Sleeps until `offset` after the cache was made (see ``DeadlineSleep``).
  let sleep: @Sendable (_ offset: Duration) async throws -> Void

  convenience init(_ clock: any Clock<Duration>) {
    self.init(opening: clock)
  }

  private init<C: Clock<Duration>>(opening clock: C) {
    let origin = clock.now
    continuousOrigin = clock is ContinuousClock ? origin as? ContinuousClock.Instant : nil
    readNow = { origin.duration(to: clock.now) }
    sleep = { offset in try await DeadlineSleep.sleep(until: offset, since: origin, on: clock) }
  }

  /// How long since the cache was made.
  @inlinable @inline(__always)
  func now() -> Duration {
    if let continuousOrigin { return continuousOrigin.duration(to: .now) }
    return readNow()
  }
}

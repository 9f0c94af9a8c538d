/// A cache's clock, read as offsets from the moment the cache was made: time stamps and deadlines are `Duration`s,
/// whatever the clock's instant type.
///
/// A class, one per cache: each entry holds its cache's, to read the time without reaching the cache (which it
/// references weakly) and to tell by identity that an entry belongs to a given cache.
@usableFromInline
final class CacheClock: Sendable {
  /// How long since the cache was made.
  @usableFromInline let now: @Sendable () -> Duration
  /// Sleeps until `offset` after the cache was made (see ``DeadlineSleep``).
  let sleep: @Sendable (_ offset: Duration) async throws -> Void

  convenience init(_ clock: any Clock<Duration>) {
    self.init(opening: clock)
  }

  private init<C: Clock<Duration>>(opening clock: C) {
    let origin = clock.now
    if let continuous = clock as? ContinuousClock, let start = origin as? ContinuousClock.Instant {
      // The default clock, read without the generic clock's witness calls (a fresh hit reads it).
      now = { start.duration(to: continuous.now) }
    } else {
      now = { origin.duration(to: clock.now) }
    }
    sleep = { offset in try await DeadlineSleep.sleep(until: offset, since: origin, on: clock) }
  }
}

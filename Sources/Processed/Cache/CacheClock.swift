/// A cache's clock, read as offsets from the moment the cache was made: time stamps and deadlines are `Duration`s,
/// whatever the clock's instant type.
struct CacheClock: Sendable {
  /// How long since the cache was made.
  let now: @Sendable () -> Duration
  /// Sleeps until `offset` after the cache was made (see ``DeadlineSleep``).
  let sleep: @Sendable (_ offset: Duration) async throws -> Void

  init(_ clock: any Clock<Duration>) {
    self = Self.make(clock)
  }

  private init(now: @escaping @Sendable () -> Duration, sleep: @escaping @Sendable (Duration) async throws -> Void) {
    self.now = now
    self.sleep = sleep
  }

  private static func make<C: Clock<Duration>>(_ clock: C) -> CacheClock {
    let origin = clock.now
    return CacheClock(
      now: { origin.duration(to: clock.now) },
      sleep: { offset in try await DeadlineSleep.sleep(until: offset, since: origin, on: clock) })
  }
}

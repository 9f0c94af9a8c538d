/// Sleeps until a deadline on any clock: every wait a load makes (interrupts, timeouts, retry delays, debounces,
/// loading delays, minimum loading times).
///
/// Each wait sleeps until a deadline from a fixed origin, never for a duration from the previous wake-up, and huge
/// delays are capped at ``longest`` and slept a day at a time, so no clock's arithmetic overflows. See
/// Documentation/LoadPhases.md.
@usableFromInline
enum DeadlineSleep {
  /// The longest delay honoured; larger ones are treated as this (in practice: never).
  static let longest = Duration.seconds(Int64.max)
  private static let step = Duration.seconds(86_400)

  /// Sleeps until `delay` after `origin` on `clock`; from now when `origin` is `nil` or an instant of another
  /// clock type. `onWake`: the ``WakeAction`` of the last step, for a clock that runs it when the deadline is reached.
  @usableFromInline
  static func sleep(
    for delay: Duration, after origin: (any InstantProtocol<Duration>)? = nil, on clock: any Clock<Duration>,
    onWake: (@Sendable () -> Void)? = nil, isolation: isolated (any Actor)? = #isolation
  ) async throws {
    try await sleep(for: delay, after: origin, onClock: clock, onWake: onWake)
  }

  private static func sleep<C: Clock<Duration>>(
    for delay: Duration, after origin: (any InstantProtocol<Duration>)?, onClock clock: C,
    onWake: (@Sendable () -> Void)?, isolation: isolated (any Actor)? = #isolation
  ) async throws {
    try await sleep(until: min(delay, longest), since: (origin as? C.Instant) ?? clock.now, on: clock, onWake: onWake)
  }

  /// Whether `clock`'s now is still before `delay` after `origin` (`false` for an origin of another clock type).
  static func isBefore(
    _ delay: Duration, after origin: any InstantProtocol<Duration>, on clock: any Clock<Duration>
  ) -> Bool {
    func check<C: Clock<Duration>>(_ clock: C) -> Bool {
      guard let origin = origin as? C.Instant else { return false }
      return clock.now < origin.advanced(by: min(delay, longest))
    }
    return check(clock)
  }

  /// Whether `instant` is an instant of `clock`'s type (a deadline measured from it can be slept until).
  static func isInstant(_ instant: any InstantProtocol<Duration>, of clock: any Clock<Duration>) -> Bool {
    func check<C: Clock<Duration>>(_ clock: C) -> Bool { instant is C.Instant }
    return check(clock)
  }

  /// Sleeps until `offset` after `origin`, in steps of a day from `reached` (an offset already slept until).
  ///
  /// Runs on the caller's actor (`isolation`): a nonisolated function would hop off the main actor and back, and the
  /// way back queues the caller behind everything the main actor has queued meanwhile, even when nothing is slept.
  static func sleep<C: Clock<Duration>>(
    until offset: Duration, since origin: C.Instant, from reached: Duration = .zero, on clock: C,
    onWake: (@Sendable () -> Void)? = nil, isolation: isolated (any Actor)? = #isolation
  ) async throws {
    var reached = reached
    while reached < offset {
      // What has passed is not slept for: that would still suspend and queue the waiter behind whatever the executor
      // has queued since (on a busy main actor, a 50 ms interrupt could then come after a 10 s load). And the steps
      // it covers are skipped in one go, so a clock that jumped far ahead (a test clock moved on by years) costs one
      // check, not one per day.
      let passed = origin.duration(to: clock.now)
      if passed >= offset {
        try Task.checkCancellation()
        return
      }
      let from = max(reached, passed)
      reached = offset - from > step ? from + step : offset
      let deadline = origin.advanced(by: reached)
      if let onWake, reached == offset {
        // Only the last step's wake is the deadline's.
        try await WakeAction.$current.withValue(onWake) { try await clock.sleep(until: deadline, tolerance: nil) }
      } else {
        try await clock.sleep(until: deadline, tolerance: nil)
      }
    }
  }

  /// `total + delay`, saturating at ``longest``.
  static func adding(_ delay: Duration, to total: Duration) -> Duration {
    longest - total < delay ? longest : total + delay
  }
}

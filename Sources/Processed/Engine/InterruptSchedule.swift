/// The interrupts of a load (`interrupts:` / `onInterrupt:`): the one schedule both engines use.
///
/// Each deadline is measured from `start`, the moment the first attempt started, on the options' clock: `[1 s, 2 s]`
/// fires at 1 s and 3 s however long each interrupt takes, also when a manual clock jumps to 3 s. A zero or negative
/// delay fires at once and adds nothing.
@usableFromInline
enum InterruptSchedule {
  /// Calls `fire` with the accumulated delay after each of `delays`, until it returns `false`, a sleep is cancelled
  /// (the load stopped), or the delays are used up.
  @usableFromInline
  static func run(
    _ delays: [Duration], from start: any InstantProtocol<Duration>, on clock: any Clock<Duration>,
    isolation: isolated (any Actor)? = #isolation,
    fire: (_ accumulatedDelay: Duration) -> Bool
  ) async {
    await run(delays, from: start, onOpened: clock, fire: fire)
  }

  /// ``run(_:from:on:isolation:fire:)`` on the opened clock, so that `start` is one of its instants.
  private static func run<C: Clock<Duration>>(
    _ delays: [Duration], from start: any InstantProtocol<Duration>, onOpened clock: C,
    isolation: isolated (any Actor)? = #isolation,
    fire: (_ accumulatedDelay: Duration) -> Bool
  ) async {
    let origin = (start as? C.Instant) ?? clock.now
    var accumulated = Duration.zero
    for requested in delays {
      if requested > .zero {
        let previous = accumulated
        accumulated = DeadlineSleep.adding(requested, to: accumulated)
        do {
          try await DeadlineSleep.sleep(until: accumulated, since: origin, from: previous, on: clock)
        } catch { return }
      }
      guard fire(accumulated) else { return }
    }
  }
}

/// The action a timeout's timer attaches to its sleep, for a clock that can run it the moment the deadline is reached.
///
/// `ProcessedTesting`'s `TestClock` reads it when a sleep starts and runs it within `advance`, before it resumes any
/// sleeper: so a timed-out block is cancelled — and stops sleeping on that clock — before `advance` returns, and a
/// test that then waits for the retry delay's sleeper never counts the block's. Other clocks ignore it; the timer
/// runs the same action itself when its sleep returns (it is idempotent).
package enum WakeAction {
  /// The action of the sleep running now, if its clock should run it on time; `nil` for every other sleep.
  @TaskLocal package static var current: (@Sendable () -> Void)?
}

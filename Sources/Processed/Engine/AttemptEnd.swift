/// What ended an attempt that has a timeout.
@usableFromInline
enum AttemptEnd: Sendable {
  /// The block returned (or threw).
  case returned
  /// The timeout passed first.
  case timedOut
  /// The load's task was cancelled (superseded, cancelled, reset).
  case stopped
}

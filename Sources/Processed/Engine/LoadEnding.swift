/// How a load's end goes, by the rule every owner follows (``LoadTracker/ending(_:)``).
@usableFromInline
enum LoadEnding {
  /// The load is no longer current (superseded, cancelled, reset or overwritten): it writes nothing.
  case superseded
  /// The load is current but its task was cancelled (through its task, or its `async` caller's): it ends without
  /// writing its outcome.
  case cancelled
  /// The load writes its outcome.
  case writesOutcome
}

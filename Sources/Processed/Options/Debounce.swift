/// Whether a load waits before it starts, so that a burst of calls (a user typing) runs one load.
///
/// ```swift
/// let options = LoadOptions(debounce: .trailing(.milliseconds(300)))
/// ```
///
/// > Important: Declared, not yet implemented: a debounced load stops with a precondition failure.
public enum Debounce: Sendable, Equatable {
  /// The load waits the duration before it starts; a newer call during the wait replaces it.
  case trailing(Duration)
  /// The load starts at once when its state had no load call in the last duration; otherwise as `.trailing`.
  case leading(Duration)
}

/// What a load call does while a load of the same state is in progress.
///
/// ```swift
/// let options = LoadOptions(overlap: .cancelRunning)
/// ```
public enum OverlapPolicy: Sendable, Equatable {
  /// The new call supersedes the load in progress (latest wins). The default.
  case cancelRunning
  /// The new call starts nothing and ends when the load in progress ends (declared, not yet implemented: such a
  /// load stops with a precondition failure).
  case joinRunning
}

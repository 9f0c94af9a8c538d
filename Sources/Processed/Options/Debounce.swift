/// Whether a load waits before it starts, so that a burst of calls (a user typing) runs one load.
///
/// ```swift
/// func queryChanged(to query: String) {
///   let options = LoadOptions(debounce: .trailing(.milliseconds(300)))
///   $results.load(options: options) { try await api.search(query) }
/// }
/// ```
///
/// A debounced call supersedes the load in progress at once, then waits on the options' clock, writing nothing —
/// no `.loading` flicker while the user types. A newer call during the wait replaces it: the replaced call's block
/// never runs, its `Task` ends and its `async` caller returns. `cancel()`, `reset()` and manual writes drop a waiting
/// call. After the wait the load starts as an ordinary one. A zero or negative duration does not wait. See
/// <doc:Debouncing>.
public enum Debounce: Sendable, Equatable {
  /// The load waits the duration before it starts; a newer call during the wait replaces it.
  case trailing(Duration)
  /// The load starts at once when its state had no load call in the last duration; otherwise as `.trailing`.
  /// Calls are timed from the state's first debounced call on (earlier ones are not: a state that never debounces
  /// pays nothing for it).
  case leading(Duration)
}

/// What a load call does while a load of the same state is in progress.
///
/// ```swift
/// @Process(options: LoadOptions(overlap: .joinRunning)) var saving
///
/// func saveTapped() {
///   $saving.run { try await api.save(document) }  // a double tap saves once
/// }
/// ```
///
/// See <doc:JoiningARunningLoad>.
public enum OverlapPolicy: Sendable, Equatable {
  /// The new call supersedes the load in progress (latest wins). The default.
  case cancelRunning
  /// While a load is in progress (in any phase), the call starts nothing, writes nothing and never runs its block;
  /// its `Task` ends, and its `async` form returns, when the load in progress ends. With no load in progress — or
  /// when the one in progress had its task cancelled (through the `Task` its call returned), so that it can no
  /// longer write — it starts as usual.
  case joinRunning
}

extension Debounce {
  /// How long a call with this debounce waits before its load starts (`nil`: not at all), given the previous
  /// debounced call of the state. A zero or negative duration, or a previous call timed on another clock type, never
  /// waits.
  @usableFromInline
  func delay(after previous: LoadCallMark?, on clock: any Clock<Duration>) -> Duration? {
    switch self {
    case .trailing(let delay):
      return delay > .zero ? delay : nil
    case .leading(let delay):
      guard delay > .zero, let elapsed = previous?.elapsed(on: clock), elapsed < delay else { return nil }
      return delay
    }
  }
}

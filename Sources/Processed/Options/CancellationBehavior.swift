/// What a cancelled load leaves on screen: ``LoadOptions/cancellation``.
///
/// ```swift
/// @Loadable(options: LoadOptions(cancellation: .restorePreviousState)) var results: LoadableState<[String]>
///
/// func searchCancelled() {
///   $results.cancel()  // the previous results come back instead of a spinner left on screen
/// }
/// ```
///
/// A load is cancelled by `cancel()`, through its `Task`, through its `async` caller, by a block that throws
/// `CancellationError`, and by `CancelLoadable` / `CancelProcess`. A newer load, `reset()`, `ResetLoadable` and a manual
/// write are not cancellations: they write their own state. See <doc:CalmPresentation>.
public enum CancellationBehavior: Sendable, Equatable {
  /// The state stays as it is: a cancelled load's `.loading` (or `.running(kind)`) stays on screen. The default, as in
  /// the original Processed package.
  case keepState
  /// The state the load's start state replaced is written back, if the state still is that start state and nothing
  /// else was written since. A load that wrote no start state (silent, still within its ``LoadOptions/loadingDelay``,
  /// or a refresh) writes nothing, unless it superseded a load whose start state is still on screen.
  case restorePreviousState
}

/// What ``PhaseDriver`` asks of the state whose load it drives: whether the load may still write, and the writes of
/// its phases. Every requirement is called on the state's owner, by the load's task.
///
/// Two hosts: a main-actor state's `HostReference` (an isolated conformance: it is only used on the main actor) and
/// an ``IsolatedStateStorage`` (on its owning actor).
@usableFromInline
protocol PhaseHost {
  associatedtype Plan: ShapedPlan where Plan.State: Sendable

  /// Whether load `id` may still write: it is current and the task running this code is not cancelled.
  func mayWrite(_ id: UInt64) -> Bool
  /// Load `id`, if it is current, entered `phase`, and keeps `error` beside its state when one is given.
  func enter(_ phase: LoadActivity.Phase, keeping error: (any Error)?, id: UInt64)
  /// Load `id`, if it is current, keeps `error` beside its state (``LoadActivity/lastError``).
  func keep(_ error: any Error, id: UInt64)
  /// Writes the plan's start state, once its debounce is over (the driver checked that load `id` may write): nothing
  /// for a silent load or a state that already is its start state.
  func writeStartState(of plan: Plan, id: UInt64)
  /// Waits until the network is up (at once when it is), showing `paused` meanwhile; `false` when the load stopped.
  nonisolated(nonsending) func awaitNetwork(of plan: Plan, id: UInt64, paused: LoadActivity.Phase) async -> Bool
  /// Runs the block once. `thrown` receives the error it threw, if any (the phases decide whether to retry it).
  nonisolated(nonsending) func runBody(
    _ plan: Plan, id: UInt64, thrown: inout (any Error)?
  ) async -> LoadOutcome<Plan.State>
  /// Calls `onInterrupt` with the accumulated delay if load `id` may still write, and returns whether the schedule
  /// goes on. An error it throws ends the load and cancels the load's task.
  func interrupt(_ plan: Plan, id: UInt64, after accumulated: Duration) -> Bool
  /// The outcome load `id` ends with, once its last attempt returned `outcome` (`lastThrown`: that attempt's error):
  /// calm presentation may hold it for the minimum loading time.
  nonisolated(nonsending) func settle(
    _ outcome: LoadOutcome<Plan.State>, of plan: Plan, id: UInt64, lastThrown: (any Error)?
  ) async -> LoadOutcome<Plan.State>
}

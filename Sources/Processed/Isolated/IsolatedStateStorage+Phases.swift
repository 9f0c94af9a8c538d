/// The body of an actor-owned state's load: its block, or ``PhaseDriver`` (debounce, start state, permit, attempts
/// raced against their timeout, retry delays, interrupts) on the owning actor, with this storage as its
/// ``PhaseHost``. See Documentation/LoadPhases.md and Documentation/IsolatedLoads.md.
extension IsolatedStateStorage: PhaseHost {
  @usableFromInline typealias Plan = IsolatedPlan<State>

  /// The body of a load with options or interrupts, on the owner: ``PhaseDriver``.
  @inlinable @inline(never)
  func executePhases(_ plan: IsolatedPlan<State>, id: UInt64, isolation: isolated (any Actor)) async {
    await LoadContext.binding.withValue(LoadContext(id: id, sink: self)) {
      let outcome = await PhaseDriver.run(plan, id: id, host: self, isolation: isolation)
      finish(id, with: outcome, keepingContent: plan.keepsContent)
    }
  }

  /// The body of a plain load, on the owner: its block, run once.
  ///
  /// `isolation` is optional, as the task-local binding's and ``IsolatedPlan/run(thrown:isolation:yield:)``'s are:
  /// with one value for the owner throughout, the optimizer drops the hops between them (each `await` of a function
  /// isolated to its own parameter hops to it, a `swift_task_switch` even when the task is on that actor already;
  /// with the owner typed two ways, a plain load made eight per cycle; see ``makePlainTask(_:id:priority:isolation:)``).
  @inlinable @inline(__always)
  func execute(_ plan: IsolatedPlan<State>, id: UInt64, isolation: isolated (any Actor)?) async {
    await LoadContext.binding.withValue(LoadContext(id: id, sink: self)) {
      var thrown: (any Error)?
      let outcome = await runBody(plan, id: id, thrown: &thrown, isolation: isolation)
      finish(id, with: outcome, keepingContent: plan.keepsContent)
    }
  }

  /// Runs the block once, on the owner: the plain path's call. `thrown` receives the error it threw, if any. Each
  /// yield writes while the load may still write.
  @inlinable
  func runBody(
    _ plan: IsolatedPlan<State>, id: UInt64, thrown: inout (any Error)?, isolation: isolated (any Actor)?
  ) async -> LoadOutcome<State> {
    await plan.run(thrown: &thrown, isolation: isolation) { state in
      if self.mayWrite(id) { self.store(state) }
    }
  }

  /// ``runBody(_:id:thrown:isolation:)`` for ``PhaseDriver``, which calls it on the owner (its caller's isolation).
  @inlinable
  nonisolated(nonsending) func runBody(
    _ plan: IsolatedPlan<State>, id: UInt64, thrown: inout (any Error)?
  ) async -> LoadOutcome<State> {
    await plan.run(thrown: &thrown) { state in
      if self.mayWrite(id) { self.store(state) }
    }
  }

  @inlinable
  func enter(_ phase: LoadActivity.Phase, keeping error: (any Error)?, id: UInt64) {
    guard tracker.isCurrent(id) else { return }
    if let error { keepError(error) }
    enter(phase)
  }

  @inlinable
  func keep(_ error: any Error, id: UInt64) {
    guard tracker.isCurrent(id) else { return }
    keepError(error)
  }

  @inlinable
  func writeStartState(of plan: IsolatedPlan<State>, id: UInt64) {
    if !plan.silently, !state.isAlready(plan.startState) { store(plan.startState) }
  }

  /// Only a cache entry's fetch waits for the network, and entries live on the main actor.
  @usableFromInline
  nonisolated(nonsending) func awaitNetwork(
    of plan: IsolatedPlan<State>, id: UInt64, paused: LoadActivity.Phase
  ) async -> Bool {
    preconditionFailure("Processed: an actor-owned load waited for the network")
  }

  @usableFromInline
  func interrupt(_ plan: IsolatedPlan<State>, id: UInt64, after accumulated: Duration) -> Bool {
    guard let onInterrupt = plan.onInterrupt, mayWrite(id) else { return false }
    // Taken before `onInterrupt` runs: it may start a newer load, whose task must not be cancelled here.
    let task = tracker.task
    do {
      try onInterrupt(accumulated)
      return true
    } catch {
      finish(id, with: LoadOutcome(error: error, failure: plan.failure), keepingContent: plan.keepsContent)
      task?.cancel()
      return false
    }
  }

  /// Calm presentation runs through the state's mirror (``StateMirror``): an actor-owned load ends as it returned.
  @inlinable
  nonisolated(nonsending) func settle(
    _ outcome: LoadOutcome<State>, of plan: IsolatedPlan<State>, id: UInt64, lastThrown: (any Error)?
  ) async -> LoadOutcome<State> {
    outcome
  }
}

/// A main-actor state's side of ``PhaseDriver``: the reference its loads' tasks hold, which reads `nil` once the host
/// is gone (every requirement then reports that the load may not write).
///
/// An isolated conformance: the driver runs on the main actor for these hosts. See Documentation/LoadPhases.md.
@MainActor extension HostReference: @MainActor PhaseHost where Host: StateHost {
  @usableFromInline typealias Plan = LoadPlan<Host.State>

  @inlinable
  func mayWrite(_ id: UInt64) -> Bool {
    guard let current = object else { return false }
    return current.mayWrite(id)
  }

  @inlinable
  func enter(_ phase: LoadActivity.Phase, keeping error: (any Error)?, id: UInt64) {
    guard let current = object, current.tracker.isCurrent(id) else { return }
    if let error { current.keepError(error) }
    current.enter(phase)
  }

  @inlinable
  func keep(_ error: any Error, id: UInt64) {
    guard let current = object, current.tracker.isCurrent(id) else { return }
    current.keepError(error)
  }

  @inlinable
  func writeStartState(of plan: Plan, id: UInt64) {
    guard let current = object, !plan.silently else { return }
    if let options = plan.options, options.presentsCalmly {
      current.presentStart(
        plan, options, id: id, writing: true, inherited: current.tracker.screen, current: current.currentState)
    } else if !current.currentState.isAlready(plan.startState) {
      current.store(plan.startState)
    }
  }

  @MainActor
  @usableFromInline
  func awaitNetwork(of plan: Plan, id: UInt64, paused: LoadActivity.Phase) async -> Bool {
    guard let network = plan.network else {
      preconditionFailure("Processed: a load without a network gate waited for the network")
    }
    guard !network.isOnline else { return true }
    // Paused: nothing is written, no permit is held and no timeout runs until the network is back.
    enter(paused, keeping: nil, id: id)
    network.loadPaused(true)
    let online = await network.waitUntilOnline()
    guard online, mayWrite(id) else { return false }
    network.loadPaused(false)
    return true
  }

  @inlinable @MainActor
  func runBody(_ plan: Plan, id: UInt64, thrown: inout (any Error)?) async -> LoadOutcome<Host.State> {
    await Host.runBody(plan, id: id, host: self, thrown: &thrown)
  }

  @usableFromInline
  func interrupt(_ plan: Plan, id: UInt64, after accumulated: Duration) -> Bool {
    guard let onInterrupt = plan.onInterrupt, let current = object, current.mayWrite(id) else { return false }
    // Taken before `onInterrupt` runs: it may start a newer load, whose task must not be cancelled here.
    let task = current.tracker.task
    do {
      try onInterrupt(accumulated)
      return true
    } catch {
      current.finish(id, with: LoadOutcome(error: error, failure: plan.failure), keepingContent: plan.keepsContent)
      task?.cancel()
      return false
    }
  }

  @inlinable @MainActor
  func settle(
    _ outcome: LoadOutcome<Host.State>, of plan: Plan, id: UInt64, lastThrown: (any Error)?
  ) async -> LoadOutcome<Host.State> {
    guard plan.options?.presentsCalmly == true else { return outcome }
    switch outcome {
    case .write:
      await Host.holdResult(of: plan, id: id, host: self)
    case .done where lastThrown is CancellationError:
      // A block that threw `CancellationError` cancelled its load: `.cancel` writes back what it replaced.
      return .cancel
    default:
      break
    }
    return outcome
  }
}

/// The driver of a load with options or interrupts, for every owner: it performs what ``LoadPhases`` decides (debounce,
/// start state, network, permit, attempts raced against their timeout, retry delays, interrupts) on the options'
/// clock, and asks its ``PhaseHost`` whether the load may still write after every wait, so a stopped load stops in
/// any phase.
///
/// It runs on the state's owner (`isolation`): the main actor for a wrapper's or a key path's state and a cache entry,
/// the owning actor for an actor-owned state. See Documentation/LoadPhases.md.
@usableFromInline
enum PhaseDriver {
  /// Drives load `id` of `host` through its phases and returns its outcome (`.done` when it stopped meanwhile).
  @inlinable @inline(never)
  static func run<Host: PhaseHost>(
    _ plan: Host.Plan, id: UInt64, host: Host, isolation: isolated (any Actor)
  ) async -> LoadOutcome<Host.Plan.State> {
    let options = plan.options?.options
    var phases = LoadPhases(
      retry: options?.retry ?? .never, usesLimiter: options?.limiter != nil, usesNetwork: plan.network != nil)
    // Before the first attempt: the debounce, the start state, the network, the first permit.
    var next: LoadPhases.Next<Host.Plan.State> = phases.begin(debounce: plan.debounce)
    while !next.isAttempt {
      guard let following = await advance(next, &phases, plan, id: id, host: host, isolation: isolation) else {
        return .done
      }
      next = following
    }
    // Interrupts count from the moment the first attempt starts and span all attempts. Measured from now, not from
    // when their task first runs (on a busy owner, that may be much later). The task runs on the owner (it uses
    // `isolation`) and reaches the plan through `interrupted`, emptied when the load ends: a task still sleeping
    // towards a later interrupt then keeps nothing of the load (its block and `onInterrupt` may hold the model).
    let interrupted = plan.interrupts.isEmpty ? nil : InterruptedPlan(plan)
    let interrupts = interrupted.map { interrupted in
      Task { [start = plan.clock.now, delays = plan.interrupts, clock = plan.clock] in
        await InterruptSchedule.run(delays, from: start, on: clock, isolation: isolation) { accumulated in
          guard let plan = interrupted.plan else { return false }
          return host.interrupt(plan, id: id, after: accumulated)
        }
      }
    }
    let outcome = await withTaskCancellationHandler {
      var generator = SystemRandomNumberGenerator()
      var lastThrown: (any Error)?
      while true {
        switch next {
        case .attempt(let attempt):
          host.enter(phases.activity, keeping: nil, id: id)
          var thrown: (any Error)?
          let outcome = await runAttempt(
            plan, id: id, host: host, holding: options?.limiter, thrown: &thrown, isolation: isolation)
          lastThrown = thrown
          next = phases.attemptEnded(outcome, thrown: thrown, using: &generator)
          if case .retry = next {
            host.enter(phases.activity, keeping: thrown, id: id)
          } else if attempt > 1, let thrown, case .end(.write(let state)) = next, state.failureError != nil {
            // The last of several attempts failed too: its error, not an earlier attempt's, is the last one.
            host.keep(thrown, id: id)
          }
        case .end(let outcome):
          return await host.settle(outcome, of: plan, id: id, lastThrown: lastThrown)
        default:
          guard let following = await advance(next, &phases, plan, id: id, host: host, isolation: isolation) else {
            return .done
          }
          next = following
        }
      }
    } onCancel: {
      interrupts?.cancel()
    }
    interrupts?.cancel()
    interrupted?.plan = nil
    return outcome
  }

  /// Performs a step between attempts and returns the next one, or `nil` when the load stopped meanwhile.
  @inlinable
  static func advance<Host: PhaseHost>(
    _ step: LoadPhases.Next<Host.Plan.State>, _ phases: inout LoadPhases, _ plan: Host.Plan, id: UInt64,
    host: Host, isolation: isolated (any Actor)
  ) async -> LoadPhases.Next<Host.Plan.State>? {
    switch step {
    case .debounce(let delay):
      try? await DeadlineSleep.sleep(for: delay, after: plan.debounceOrigin?.instant, on: plan.clock)
      guard host.mayWrite(id) else { break }
      return phases.debounceEnded()
    case .writeStartState:
      guard host.mayWrite(id) else { break }
      host.writeStartState(of: plan, id: id)
      return phases.startStateWritten()
    case .awaitNetwork:
      guard await host.awaitNetwork(of: plan, id: id, paused: phases.activity) else { break }
      return phases.networkAvailable()
    case .acquirePermit:
      guard let limiter = plan.options?.options.limiter else {
        preconditionFailure("Processed: a load without a limiter waited for a permit")
      }
      host.enter(phases.activity, keeping: nil, id: id)
      // The first attempt takes the place the call reserved; later ones queue again.
      let granted: Bool
      if let ticket = plan.ticket, case .waitingForPermit(1) = phases.phase {
        granted = await limiter.claim(ticket)
      } else {
        granted = await limiter.acquire()
      }
      guard granted else { break }
      guard host.mayWrite(id) else {
        limiter.release()
        break
      }
      return phases.permitAcquired()
    case .retry(let delay):
      try? await DeadlineSleep.sleep(for: delay, on: plan.clock)
      guard host.mayWrite(id) else { break }
      return phases.retryDelayEnded()
    case .attempt, .end:
      preconditionFailure("Processed: \(step) is not a step between attempts")
    }
    phases.stopped()
    return nil
  }

  /// One attempt: the block, raced against its timeout when the options have one.
  ///
  /// `permit`: the limiter whose permit the attempt holds, given back when the block returns. A timed-out block's task
  /// is cancelled and can never write; see Documentation/LoadPhases.md.
  @inlinable
  static func runAttempt<Host: PhaseHost>(
    _ plan: Host.Plan, id: UInt64, host: Host, holding permit: LoadLimiter?, thrown: inout (any Error)?,
    isolation: isolated (any Actor)
  ) async -> LoadOutcome<Host.Plan.State> {
    guard let timeout = plan.options?.options.timeout else {
      let outcome = await host.runBody(plan, id: id, thrown: &thrown)
      permit?.release()
      return outcome
    }
    return await TimeoutRace.run(
      timeout: timeout, on: plan.clock, holding: permit, failure: plan.failure, thrown: &thrown,
      isolation: isolation
    ) { ended in
      // On the owner too (it uses `isolation`): the block runs there, in a task of its own that a timeout cancels.
      Task {
        _ = isolation
        var thrown: (any Error)?
        // Cancelled before it ran (the load stopped being current while the attempt was being set up, for example
        // during the hop to this task): the block never starts.
        let outcome = Task.isCancelled ? .done : await host.runBody(plan, id: id, thrown: &thrown)
        permit?.release()
        ended.signal(.returned)
        return AttemptResult(outcome: outcome, thrown: thrown)
      }
    }
  }
}

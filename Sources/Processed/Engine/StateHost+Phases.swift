/// The driver of a load with options or interrupts: it performs what ``LoadPhases`` decides on the options' clock, and
/// checks `mayWrite` after every wait, so a stopped load stops in any phase.
///
/// Kept out of `execute`, so that a plain load has a small task frame. See Documentation/LoadPhases.md.
extension StateHost {
  @inlinable @inline(never)
  static func runPhases(_ plan: LoadPlan<State>, id: UInt64, host: HostReference<Self>) async -> LoadOutcome<State> {
    let options = plan.options?.options
    var phases = LoadPhases(
      retry: options?.retry ?? .never, usesLimiter: options?.limiter != nil, usesNetwork: plan.network != nil)
    // Before the first attempt: the debounce, the start state, the network, the first permit.
    var next: LoadPhases.Next<State> = phases.begin(debounce: plan.debounce)
    while !next.isAttempt {
      guard let following = await advance(next, &phases, plan, id: id, host: host) else { return .done }
      next = following
    }
    // Interrupts count from the moment the first attempt starts and span all attempts.
    // Measured from now, not from when their task first runs (on a busy main actor, that may be much later).
    let interrupts =
      plan.interrupts.isEmpty
      ? nil : Task { [start = plan.clock.now] in await runInterrupts(plan, id: id, host: host, from: start) }
    let outcome = await withTaskCancellationHandler {
      var generator = SystemRandomNumberGenerator()
      var lastThrown: (any Error)?
      while true {
        switch next {
        case .attempt(let attempt):
          enter(phases.activity, id: id, host: host)
          var thrown: (any Error)?
          let outcome = await runAttempt(plan, id: id, host: host, holding: options?.limiter, thrown: &thrown)
          lastThrown = thrown
          next = phases.attemptEnded(outcome, thrown: thrown, using: &generator)
          if case .retry = next {
            enter(phases.activity, keeping: thrown, id: id, host: host)
          } else if attempt > 1, let thrown, case .end(.write(let state)) = next, state.failureError != nil {
            // The last of several attempts failed too: its error, not an earlier attempt's, is the last one.
            keep(thrown, id: id, host: host)
          }
        case .end(let outcome):
          guard plan.options?.presentsCalmly == true else { return outcome }
          switch outcome {
          case .write:
            await holdResult(of: plan, id: id, host: host)
          case .done where lastThrown is CancellationError:
            // A block that threw `CancellationError` cancelled its load: `.cancel` writes back what it replaced.
            return .cancel
          default:
            break
          }
          return outcome
        default:
          guard let following = await advance(next, &phases, plan, id: id, host: host) else { return .done }
          next = following
        }
      }
    } onCancel: {
      interrupts?.cancel()
    }
    interrupts?.cancel()
    return outcome
  }

  /// Performs a step between attempts and returns the next one, or `nil` when the load stopped meanwhile.
  @inlinable
  static func advance(
    _ step: LoadPhases.Next<State>, _ phases: inout LoadPhases, _ plan: LoadPlan<State>, id: UInt64,
    host: HostReference<Self>
  ) async -> LoadPhases.Next<State>? {
    switch step {
    case .debounce(let delay):
      try? await DeadlineSleep.sleep(for: delay, after: plan.debounceOrigin?.instant, on: plan.clock)
      guard let current = host.object, current.mayWrite(id) else { break }
      return phases.debounceEnded()
    case .writeStartState:
      guard let current = host.object, current.mayWrite(id) else { break }
      if plan.silently {
      } else if let options = plan.options, options.presentsCalmly {
        current.presentStart(
          plan, options, id: id, writing: true, inherited: current.tracker.screen, current: current.currentState)
      } else if !current.currentState.isAlready(plan.startState) {
        current.store(plan.startState)
      }
      return phases.startStateWritten()
    case .awaitNetwork:
      guard let network = plan.network else {
        preconditionFailure("Processed: a load without a network gate waited for the network")
      }
      if !network.isOnline {
        // Paused: nothing is written, no permit is held and no timeout runs until the network is back.
        enter(phases.activity, id: id, host: host)
        network.loadPaused(true)
        let online = await network.waitUntilOnline()
        guard online, let current = host.object, current.mayWrite(id) else { break }
        network.loadPaused(false)
      }
      return phases.networkAvailable()
    case .acquirePermit:
      guard let limiter = plan.options?.options.limiter else {
        preconditionFailure("Processed: a load without a limiter waited for a permit")
      }
      enter(phases.activity, id: id, host: host)
      // The first attempt takes the place the call reserved; later ones queue again.
      let granted: Bool
      if let ticket = plan.ticket, case .waitingForPermit(1) = phases.phase {
        granted = await limiter.claim(ticket)
      } else {
        granted = await limiter.acquire()
      }
      guard granted else { break }
      guard let current = host.object, current.mayWrite(id) else {
        limiter.release()
        break
      }
      return phases.permitAcquired()
    case .retry(let delay):
      try? await DeadlineSleep.sleep(for: delay, on: plan.clock)
      guard let current = host.object, current.mayWrite(id) else { break }
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
  static func runAttempt(
    _ plan: LoadPlan<State>, id: UInt64, host: HostReference<Self>, holding permit: LoadLimiter?,
    thrown: inout (any Error)?
  ) async -> LoadOutcome<State> {
    guard let timeout = plan.options?.options.timeout else {
      let outcome = await runBody(plan, id: id, host: host, thrown: &thrown)
      permit?.release()
      return outcome
    }
    return await TimeoutRace.run(
      timeout: timeout, on: plan.clock, holding: permit, failure: plan.failure, thrown: &thrown
    ) { ended in
      Task {
        var thrown: (any Error)?
        // Cancelled before it ran (the load stopped being current while the attempt was being set up, for example
        // during the hop to this task): the block never starts.
        let outcome = Task.isCancelled ? .done : await runBody(plan, id: id, host: host, thrown: &thrown)
        permit?.release()
        ended.signal(.returned)
        return AttemptResult(outcome: outcome, thrown: thrown)
      }
    }
  }

  /// Load `id`, if it is current, keeps `error` beside its state (``LoadActivity/lastError``).
  @inlinable
  static func keep(_ error: any Error, id: UInt64, host: HostReference<Self>) {
    guard let current = host.object, current.tracker.isCurrent(id) else { return }
    current.keepError(error)
  }

  /// Load `id`, if it is current, entered `phase` (and keeps `error` beside its state, when given).
  @inlinable
  static func enter(
    _ phase: LoadActivity.Phase, keeping error: (any Error)? = nil, id: UInt64, host: HostReference<Self>
  ) {
    guard let current = host.object, current.tracker.isCurrent(id) else { return }
    if let error { current.keepError(error) }
    current.enter(phase)
  }

  /// Calls `onInterrupt` after each accumulated delay while load `id` is current (``InterruptSchedule``). An error
  /// thrown from `onInterrupt` ends the load like an error from the block, and cancels the load's task (never
  /// retried).
  @inlinable
  static func runInterrupts(
    _ plan: LoadPlan<State>, id: UInt64, host: HostReference<Self>, from start: any InstantProtocol<Duration>
  ) async {
    guard let onInterrupt = plan.onInterrupt else { return }
    await InterruptSchedule.run(plan.interrupts, from: start, on: plan.clock) { accumulated in
      guard let current = host.object, current.mayWrite(id) else { return false }
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
  }
}

/// The body of an actor-owned state's load: its block, or the phases ``LoadPhases`` decides (debounce, start state,
/// permit, attempts raced against their timeout, retry delays, interrupts), performed on the owning actor.
///
/// Every wait is followed by a `mayWrite` check, so a stopped load stops in any phase. See
/// Documentation/LoadPhases.md and Documentation/IsolatedLoads.md.
extension IsolatedStateStorage {
  /// The body of a load's task, on the owner.
  @inlinable
  func execute(_ plan: IsolatedPlan<State>, id: UInt64, isolation: isolated (any Actor)) async {
    await LoadContext.binding.withValue(LoadContext(id: id, sink: self)) {
      let outcome: LoadOutcome<State>
      if plan.needsPhases {
        outcome = await runPhases(plan, id: id, isolation: isolation)
      } else {
        var thrown: (any Error)?
        outcome = await runBody(plan, id: id, thrown: &thrown, isolation: isolation)
      }
      finish(id, with: outcome, keepingContent: plan.keepsContent)
    }
  }

  /// Runs the block once. `thrown` receives the error it threw, if any.
  @inlinable
  func runBody(
    _ plan: IsolatedPlan<State>, id: UInt64, thrown: inout (any Error)?,
    isolation: isolated (any Actor)
  ) async -> LoadOutcome<State> {
    do {
      switch plan.work {
      case .returning(let block):
        return .write(State.loaded(try await block()))
      case .finishing(let block):
        try await block()
        return State.finished(startedAs: plan.startState).map(LoadOutcome.write) ?? .done
      case .yielding(let block):
        // Called by the block, on the owner: each yield writes while the load may still write.
        try await block { state in
          if self.mayWrite(id) { self.store(state) }
        }
        return .done
      }
    } catch {
      thrown = error
      return LoadOutcome(error: error, failure: plan.failure)
    }
  }

  /// The phase driver, for a load with options or interrupts.
  @inlinable
  func runPhases(
    _ plan: IsolatedPlan<State>, id: UInt64, isolation: isolated (any Actor)
  ) async -> LoadOutcome<State> {
    let options = plan.options?.options
    var phases = LoadPhases(retry: options?.retry ?? .never, usesLimiter: options?.limiter != nil)
    var next: LoadPhases.Next<State> = phases.begin(debounce: plan.debounce)
    while !next.isAttempt {
      guard let following = await advance(next, &phases, plan, id: id, isolation: isolation) else { return .done }
      next = following
    }
    // Interrupts count from the moment the first attempt starts and span all attempts.
    let interrupts =
      plan.interrupts.isEmpty
      ? nil
      : Task { [start = plan.clock.now] in
        await self.runInterrupts(plan, id: id, from: start, isolation: isolation)
      }
    let outcome = await withTaskCancellationHandler {
      var generator = SystemRandomNumberGenerator()
      while true {
        switch next {
        case .attempt(let attempt):
          enter(phases.activity, id: id)
          var thrown: (any Error)?
          let outcome = await runAttempt(
            plan, id: id, holding: options?.limiter, thrown: &thrown, isolation: isolation)
          next = phases.attemptEnded(outcome, thrown: thrown, using: &generator)
          if case .retry = next {
            if currentID == id, let thrown { keepError(thrown) }
            enter(phases.activity, id: id)
          } else if attempt > 1, let thrown, case .end(.write(let state)) = next, state.failureError != nil,
            currentID == id
          {
            keepError(thrown)
          }
        case .end(let outcome):
          return outcome
        default:
          guard let following = await advance(next, &phases, plan, id: id, isolation: isolation) else {
            return .done
          }
          next = following
        }
      }
    } onCancel: {
      interrupts?.cancel()
    }
    interrupts?.cancel()
    return outcome
  }

  /// Load `id`, if it is current, entered `phase`.
  @inlinable
  func enter(_ phase: LoadActivity.Phase, id: UInt64) {
    guard currentID == id else { return }
    enter(phase)
  }

  /// Performs a step between attempts and returns the next one, or `nil` when the load stopped meanwhile.
  @inlinable
  func advance(
    _ step: LoadPhases.Next<State>, _ phases: inout LoadPhases, _ plan: IsolatedPlan<State>, id: UInt64,
    isolation: isolated (any Actor)
  ) async -> LoadPhases.Next<State>? {
    switch step {
    case .debounce(let delay):
      try? await DeadlineSleep.sleep(for: delay, after: plan.debounceOrigin?.instant, on: plan.clock)
      guard mayWrite(id) else { break }
      return phases.debounceEnded()
    case .writeStartState:
      guard mayWrite(id) else { break }
      if !plan.silently, !state.isAlready(plan.startState) { store(plan.startState) }
      return phases.startStateWritten()
    case .awaitNetwork:
      // Only a cache entry's fetch waits for the network, and entries live on the main actor.
      preconditionFailure("Processed: an actor-owned load waited for the network")
    case .acquirePermit:
      guard let limiter = plan.options?.options.limiter else {
        preconditionFailure("Processed: a load without a limiter waited for a permit")
      }
      enter(phases.activity, id: id)
      // The first attempt takes the place the call reserved; later ones queue again.
      let granted: Bool
      if let ticket = plan.ticket, case .waitingForPermit(1) = phases.phase {
        granted = await limiter.claim(ticket)
      } else {
        granted = await limiter.acquire()
      }
      guard granted else { break }
      guard mayWrite(id) else {
        limiter.release()
        break
      }
      return phases.permitAcquired()
    case .retry(let delay):
      try? await DeadlineSleep.sleep(for: delay, on: plan.clock)
      guard mayWrite(id) else { break }
      return phases.retryDelayEnded()
    case .attempt, .end:
      preconditionFailure("Processed: \(step) is not a step between attempts")
    }
    phases.stopped()
    return nil
  }

  /// One attempt: the block, raced against its timeout when the options have one. `permit`: the limiter whose permit
  /// the attempt holds, given back when the block returns.
  @inlinable
  func runAttempt(
    _ plan: IsolatedPlan<State>, id: UInt64, holding permit: LoadLimiter?,
    thrown: inout (any Error)?, isolation: isolated (any Actor)
  ) async -> LoadOutcome<State> {
    guard let timeout = plan.options?.options.timeout else {
      let outcome = await runBody(plan, id: id, thrown: &thrown, isolation: isolation)
      permit?.release()
      return outcome
    }
    return await TimeoutRace.run(
      timeout: timeout, on: plan.clock, holding: permit, failure: plan.failure, thrown: &thrown,
      isolation: isolation
    ) { ended in
      // On the owner too (it uses `isolation`): the block runs there, in a task of its own that a timeout cancels.
      Task {
        var thrown: (any Error)?
        let outcome =
          Task.isCancelled ? .done : await self.runBody(plan, id: id, thrown: &thrown, isolation: isolation)
        permit?.release()
        ended.signal(.returned)
        return AttemptResult(outcome: outcome, thrown: thrown)
      }
    }
  }

  /// Calls `onInterrupt` after each accumulated delay while load `id` is current (``InterruptSchedule``); an error it
  /// throws ends the load like the block's and cancels the load's task.
  @usableFromInline
  func runInterrupts(
    _ plan: IsolatedPlan<State>, id: UInt64, from start: any InstantProtocol<Duration>,
    isolation: isolated (any Actor)
  ) async {
    guard let onInterrupt = plan.onInterrupt else { return }
    await InterruptSchedule.run(plan.interrupts, from: start, on: plan.clock, isolation: isolation) { accumulated in
      guard mayWrite(id) else { return false }
      // Taken before `onInterrupt` runs: it may start a newer load, whose task must not be cancelled here.
      let task = self.task
      do {
        try onInterrupt(accumulated)
        return true
      } catch {
        finish(id, with: LoadOutcome(error: error, failure: plan.failure), keepingContent: plan.keepsContent)
        task?.cancel()
        return false
      }
    }
  }
}

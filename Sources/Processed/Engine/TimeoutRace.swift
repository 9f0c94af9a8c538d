/// One attempt raced against its timeout, for ``PhaseDriver`` on every owner (the main actor and any actor).
///
/// The caller makes the attempt's task on the load's owner (`startingBody`): it runs the block, gives back the permit
/// and signals `.returned`. A timer on the options' clock races it; the first of the block returning, the timeout
/// passing, and the load's task being cancelled wins. A timed-out block's task is cancelled and can never write (its
/// load's `mayWrite` checks the task). See Documentation/LoadPhases.md.
@usableFromInline
enum TimeoutRace {
  /// Runs the attempt `startingBody` makes against `timeout` on `clock` and returns its outcome; `thrown` receives
  /// what the block threw, or a ``TimeoutError`` when the time ran out. `permit` is given back at once when the
  /// timeout is zero or negative (the block never runs).
  @usableFromInline
  static func run<State: Sendable>(
    timeout: Duration, on clock: any Clock<Duration>, holding permit: LoadLimiter?,
    failure: (any Error) -> State, thrown: inout (any Error)?,
    isolation: isolated (any Actor)? = #isolation,
    startingBody: (_ ended: FirstSignal<AttemptEnd>) -> Task<AttemptResult<State>, Never>
  ) async -> LoadOutcome<State> {
    if timeout <= .zero {
      permit?.release()
      thrown = TimeoutError()
      return LoadOutcome(error: TimeoutError(), failure: failure)
    }
    let ended = FirstSignal<AttemptEnd>()
    let body = startingBody(ended)
    // Idempotent, and run by the timer when it wakes — or sooner by a clock that runs a sleep's `WakeAction` at its
    // deadline (a `TestClock`, within `advance`), so that the timed-out block stops sleeping on it at once.
    let timeUp: @Sendable () -> Void = {
      ended.signal(.timedOut)
      body.cancel()
    }
    let timer = Task {
      guard
        (try? await DeadlineSleep.sleep(for: min(timeout, DeadlineSleep.longest), on: clock, onWake: timeUp)) != nil
      else {
        return  // cancelled (the attempt ended first), or a clock that failed: no timeout
      }
      timeUp()
    }
    // The block's task is cancelled in the handler itself, synchronously: a load started from inside the block
    // supersedes this one, and must see its caller cancelled at once (see `startAwaited`).
    let end = await withTaskCancellationHandler {
      await ended.wait()
    } onCancel: {
      body.cancel()
      ended.signal(.stopped)
    }
    timer.cancel()
    switch end {
    case .returned:
      let result = await body.value
      thrown = result.thrown
      return result.outcome
    case .timedOut:
      body.cancel()
      thrown = TimeoutError()
      return LoadOutcome(error: TimeoutError(), failure: failure)
    case .stopped:
      return .done
    }
  }
}

/// How a load ended, before the engine checks that it may still write.
@usableFromInline
enum LoadOutcome<State> {
  /// Write this state (a returned value, a failure).
  case write(State)
  /// Nothing more to write (a yielding block returned, or the block threw `CancellationError`).
  case done
  /// `CancelLoadable` / `CancelProcess`: act as `cancel()`.
  case cancel
  /// `ResetLoadable` / `ResetProcess`: act as `reset()`.
  case reset

  /// Classifies an error thrown by a block or by `onInterrupt`.
  @inlinable
  init(error: any Error, failure: (any Error) -> State) {
    switch error {
    case is CancelLoadable, is CancelProcess: self = .cancel
    case is ResetLoadable, is ResetProcess: self = .reset
    case is CancellationError: self = .done
    default: self = .write(failure(error))
    }
  }
}

extension LoadOutcome: Sendable where State: Sendable {}

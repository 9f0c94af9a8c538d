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

extension LoadOutcome where State: ManagedState {
  /// The outcome of a block that returned `value`: `.loaded(value)`.
  @inlinable
  static func loaded(_ value: State.LoadedValue) -> Self { .write(State.loaded(value)) }

  /// The outcome of a block that returned nothing, for a load that started as `startState` (`.finished(kind)` for a
  /// process).
  @inlinable
  static func finished(startedAs startState: State) -> Self {
    State.finished(startedAs: startState).map(Self.write) ?? .done
  }

  /// For a load that ends by writing `state`: updates the error kept beside the state through `keepError`, and
  /// returns whether `state` is written. A refresh's (`keepingContent`) ordinary failure is kept, not written; a
  /// success clears the kept error; an ordinary failure of a load (which the state shows) leaves it as it was.
  @inlinable
  static func writes(
    _ state: State, keepingContent: Bool, keepError: (_ error: (any Error)?) -> Void
  ) -> Bool {
    let error = state.failureError
    if keepingContent, let error {
      keepError(error)
    } else if error == nil {
      keepError(nil)
    }
    return !keepingContent || error == nil
  }
}

/// What the engine needs to know about a state type. Loads and processes differ only in these answers and in the
/// states a ``LoadPlan`` writes; everything else is shared.
@usableFromInline
protocol ManagedState {
  /// The state `reset()` writes: `.absent` or `.idle`.
  static var resetState: Self { get }
  /// Whether this is already the reset state (then `reset()` writes nothing).
  var isResetState: Bool { get }
  /// Whether this already is exactly the start state `start` (then a load writes nothing when it starts).
  func isAlready(_ start: Self) -> Bool
  /// The state an ordinary error writes for a load that started with `start`.
  static func failure(_ error: any Error, startedAs start: Self) -> Self
}

extension LoadableState: ManagedState {
  @inlinable static var resetState: Self { .absent }
  @inlinable var isResetState: Bool { isAbsent }
  @inlinable func isAlready(_ start: Self) -> Bool { isLoading }
  @inlinable static func failure(_ error: any Error, startedAs start: Self) -> Self { .error(error) }
}

extension ProcessState: ManagedState where ProcessKind: Equatable {
  @inlinable static var resetState: Self { .idle }
  @inlinable var isResetState: Bool { isIdle }

  @inlinable
  func isAlready(_ start: Self) -> Bool {
    guard case .running(let kind) = start else { return false }
    return isRunning(kind)
  }

  @inlinable
  static func failure(_ error: any Error, startedAs start: Self) -> Self {
    guard case .running(let kind) = start else {
      preconditionFailure("Processed: a process run always starts in .running")
    }
    return .failed(process: kind, error: error)
  }
}

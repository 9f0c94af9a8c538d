/// What the engine needs to know about a state type. Loads and processes differ only in these answers and in the
/// states a ``LoadPlan`` writes; everything else is shared.
@usableFromInline
protocol ManagedState {
  /// What a returning block's result is stored as (`LoadableState`: its value; `ProcessState`: none).
  associatedtype LoadedValue
  /// The state a returning block's result writes.
  static func loaded(_ value: LoadedValue) -> Self
  /// The state a block that returns nothing ends with, for a load that started with `start` (`nil`: nothing).
  static func finished(startedAs start: Self) -> Self?
  /// The state `reset()` writes: `.absent` or `.idle`.
  static var resetState: Self { get }
  /// Whether this is already the reset state (then `reset()` writes nothing).
  var isResetState: Bool { get }
  /// Whether this already is exactly the start state `start` (then a load writes nothing when it starts).
  func isAlready(_ start: Self) -> Bool
  /// Whether this is a start state (`.loading`, `.running`): what a load shows while it runs.
  var isStartState: Bool { get }
  /// The state an ordinary error writes for a load that started with `start`.
  static func failure(_ error: any Error, startedAs start: Self) -> Self
  /// The error, when this is a failure state (`.error`, `.failed`).
  var failureError: (any Error)? { get }
  /// Whether the state type has a last value to keep (``LoadableController/lastValue``).
  static var keepsLastValue: Bool { get }
  /// Whether this state holds a value to keep as the last value (`.loaded`).
  var holdsValue: Bool { get }
}

extension ManagedState {
  /// Keeps `kept` — the last state that held a value, while the state holds none (``LoadableController/lastValue``),
  /// or the reset state when there is none — up to date as `old` is replaced by `new`: a reset forgets it, and a state
  /// that held a value is kept when it is replaced by one that holds none. Writes `kept` only when it changes.
  ///
  /// Not optional: a storage's fields of type `State?` made its generic `deinit` look up `Optional<State>`'s metadata
  /// and destroy it through the runtime's enum witnesses, a third of a state's lifetime cost. A state that holds a value
  /// is never the reset state, so the reset state stands for none (``lastValue(in:)``).
  @inlinable @inline(__always)
  static func keepLastValue(_ kept: inout Self, replacing old: Self, with new: Self) {
    guard keepsLastValue else { return }
    if new.isResetState {
      if !kept.isResetState { kept = resetState }
    } else if old.holdsValue, !new.holdsValue {
      kept = old
    }
  }

  /// The last state that held a value kept by ``keepLastValue(_:replacing:with:)``, or `nil`.
  @inlinable
  static func lastValue(in kept: Self) -> Self? { kept.isResetState ? nil : kept }
}

extension LoadableState: ManagedState {
  @usableFromInline typealias LoadedValue = Value
  // `loaded(_:)` is the enum case itself.
  @inlinable static func finished(startedAs start: Self) -> Self? { nil }
  @inlinable static var resetState: Self { .absent }
  @inlinable var isResetState: Bool { isAbsent }
  @inlinable func isAlready(_ start: Self) -> Bool { isLoading }
  @inlinable var isStartState: Bool { isLoading }
  @inlinable static func failure(_ error: any Error, startedAs start: Self) -> Self { .error(error) }
  @inlinable var failureError: (any Error)? { error }
  @inlinable static var keepsLastValue: Bool { true }
  @inlinable var holdsValue: Bool { isLoaded }
}

extension ProcessState: ManagedState where ProcessKind: Equatable {
  /// A process's block returns nothing (its plan is always `.finishing`).
  @usableFromInline typealias LoadedValue = Never
  @inlinable static func loaded(_ value: Never) -> Self {}

  @inlinable
  static func finished(startedAs start: Self) -> Self? {
    guard case .running(let kind) = start else {
      preconditionFailure("Processed: a process run always starts in .running")
    }
    return .finished(kind)
  }

  @inlinable static var resetState: Self { .idle }
  @inlinable var isResetState: Bool { isIdle }
  @inlinable var isStartState: Bool { isRunning }

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

  @inlinable var failureError: (any Error)? { error }
  @inlinable static var keepsLastValue: Bool { false }
  @inlinable var holdsValue: Bool { false }
}

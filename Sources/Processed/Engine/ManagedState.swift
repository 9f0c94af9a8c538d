/// What the engine needs to know about a state type: the value it returns to on `reset()`.
///
/// Loads and processes differ only in this and in the states a ``LoadPlan`` writes; everything else is shared.
protocol ManagedState {
  /// The state `reset()` writes: `.absent` or `.idle`.
  static var resetState: Self { get }
  /// Whether this is already the reset state (then `reset()` writes nothing).
  var isResetState: Bool { get }
}

extension LoadableState: ManagedState {
  static var resetState: Self { .absent }
  var isResetState: Bool { isAbsent }
}

extension ProcessState: ManagedState {
  static var resetState: Self { .idle }
  var isResetState: Bool { isIdle }
}

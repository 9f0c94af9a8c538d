extension ProcessState: Equatable where ProcessKind: Equatable {
  /// Whether two states are equal.
  ///
  /// States of different cases are never equal; `.running` and `.finished` compare their processes. Two `.failed`
  /// states are equal when their processes are equal and their errors have the same dynamic type and, if that type
  /// is `Equatable`, compare equal (errors of the same non-`Equatable` type are equal; of different types, not).
  ///
  /// ```swift
  /// ProcessState<Int>.running(1) == .running(1)  // true
  /// ProcessState<Int>.running(1) == .finished(1) // false
  /// ```
  ///
  /// - Parameters:
  ///   - lhs: A state.
  ///   - rhs: Another state.
  /// - Returns: `true` when the states are equal.
  public static func == (lhs: Self, rhs: Self) -> Bool {
    switch (lhs, rhs) {
    case (.idle, .idle): true
    case (.running(let lhsProcess), .running(let rhsProcess)): lhsProcess == rhsProcess
    case (.finished(let lhsProcess), .finished(let rhsProcess)): lhsProcess == rhsProcess
    case (.failed(let lhsProcess, let lhsError), .failed(let rhsProcess, let rhsError)):
      lhsProcess == rhsProcess && errorsAreEqual(lhsError, rhsError)
    case (.idle, _), (.running, _), (.failed, _), (.finished, _): false
    }
  }
}

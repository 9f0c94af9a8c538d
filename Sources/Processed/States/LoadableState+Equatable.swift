extension LoadableState: Equatable where Value: Equatable {
  /// Whether two states are equal.
  ///
  /// States of different cases are never equal. Two `.loaded` states compare their values; two `.error` states are
  /// equal when their errors have the same dynamic type and, if that type is `Equatable`, compare equal (errors of
  /// the same non-`Equatable` type are equal; errors of different types are not).
  ///
  /// ```swift
  /// LoadableState<Int>.loading == .loading        // true
  /// LoadableState<Int>.loaded(1) == .loading      // false
  /// LoadableState<Int>.error(TimeoutError()) == .error(TimeoutError())  // true
  /// ```
  ///
  /// - Parameters:
  ///   - lhs: A state.
  ///   - rhs: Another state.
  /// - Returns: `true` when the states are equal.
  public static func == (lhs: Self, rhs: Self) -> Bool {
    switch (lhs, rhs) {
    case (.absent, .absent), (.loading, .loading): true
    case (.error(let lhsError), .error(let rhsError)): errorsAreEqual(lhsError, rhsError)
    case (.loaded(let lhsValue), .loaded(let rhsValue)): lhsValue == rhsValue
    case (.absent, _), (.loading, _), (.error, _), (.loaded, _): false
    }
  }
}

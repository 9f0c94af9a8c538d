extension LoadableState: CustomDebugStringConvertible {
  /// A readable description of the state, for logs and test failures.
  ///
  /// The value is shown as `debugPrint` would show it (strings quoted); the error as `print` would show it, so a plain
  /// error struct reads `MyError()` and an error with a `description` shows that.
  ///
  /// ```swift
  /// LoadableState<[Int]>.loaded([1, 2]).debugDescription   // "LoadableState.loaded([1, 2])"
  /// LoadableState<Int>.error(MyError()).debugDescription   // "LoadableState.error(MyError())"
  /// LoadableState<Int>.absent.debugDescription             // "LoadableState.absent"
  /// ```
  public var debugDescription: String {
    switch self {
    case .absent: "LoadableState.absent"
    case .loading: "LoadableState.loading"
    case .error(let error): "LoadableState.error(\(String(describing: error)))"
    case .loaded(let value): "LoadableState.loaded(\(String(reflecting: value)))"
    }
  }
}

extension ProcessState: CustomDebugStringConvertible {
  /// A readable description of the state, for logs and test failures.
  ///
  /// The process is shown as `debugPrint` would show it; the error as `print` would show it, so a plain error struct
  /// reads `MyError()` and an error with a `description` shows that.
  ///
  /// ```swift
  /// ProcessState<String>.running("save").debugDescription
  /// // "ProcessState.running(\"save\")"
  /// SingleProcessState.failed(process: SingleProcess(id: "a"), error: MyError()).debugDescription
  /// // "ProcessState.failed(process: SingleProcess(id: \"a\"), error: MyError())"
  /// ```
  public var debugDescription: String {
    switch self {
    case .idle:
      "ProcessState.idle"
    case .running(let process):
      "ProcessState.running(\(String(reflecting: process)))"
    case .failed(let process, let error):
      "ProcessState.failed(process: \(String(reflecting: process)), error: \(String(describing: error)))"
    case .finished(let process):
      "ProcessState.finished(\(String(reflecting: process)))"
    }
  }
}

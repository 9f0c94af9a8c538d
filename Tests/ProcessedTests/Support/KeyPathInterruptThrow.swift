import Processed

/// What an `onInterrupt` handler throws in the stale-interrupt tests.
enum KeyPathInterruptThrow: String, Sendable {
  case timeout
  case cancel
  case reset

  var error: any Error {
    switch self {
    case .timeout: TimeoutError()
    case .cancel: CancelLoadable()
    case .reset: ResetLoadable()
    }
  }
}

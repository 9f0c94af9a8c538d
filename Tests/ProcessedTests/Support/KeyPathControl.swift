import Processed

/// The control errors, each with what it must do to a load (B5: all four act alike for loads and processes).
enum KeyPathControl: String, CaseIterable, Sendable {
  case cancelLoadable
  case resetLoadable
  case cancelProcess
  case resetProcess

  var error: any Error {
    switch self {
    case .cancelLoadable: CancelLoadable()
    case .resetLoadable: ResetLoadable()
    case .cancelProcess: CancelProcess()
    case .resetProcess: ResetProcess()
    }
  }

  var resets: Bool { self == .resetLoadable || self == .resetProcess }
}

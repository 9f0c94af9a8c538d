/// The state of a process (an asynchronous action such as saving or deleting): idle, running, failed or finished.
///
/// `ProcessKind` names which process the state is about, so one state can run several kinds of process (an enum
/// such as `.save` / `.delete`). When there is only one, use ``SingleProcessState``, whose kind ``SingleProcess``
/// gives each run a fresh identity.
///
/// A `ProcessState` is a plain value. Held by the ``Process`` property wrapper or a ``ProcessSupport`` class, the
/// library drives it through its cases for you.
///
/// ```swift
/// enum Action: Equatable, Sendable { case save, delete }
///
/// var action: ProcessState<Action> = .idle
/// action.start(.save)                 // .running(.save)
/// action.fail(with: TimeoutError())   // .failed(process: .save, error: TimeoutError())
/// action.isRunning(.save)             // false
/// action.hasFailed(.save)             // true
/// ```
///
/// ## Equality of errors
///
/// When `ProcessKind` is `Equatable`, so is the state. Two `.failed` states are equal when their processes are equal
/// and their errors have the same dynamic type and, if that type is `Equatable`, compare equal with its `==`. Errors
/// of the same type that is not `Equatable` count as equal; errors of different types never do.
public enum ProcessState<ProcessKind> {
  /// No process is running, and none has run since the state was last reset.
  case idle

  /// The given process is running.
  case running(ProcessKind)

  /// The given process failed with the given error.
  case failed(process: ProcessKind, error: any Error)

  /// The given process finished successfully.
  case finished(ProcessKind)
}

/// A process state for a single kind of process, where each run is a distinct ``SingleProcess``.
///
/// ```swift
/// var save: SingleProcessState = .idle
/// save.start()
/// save.finish()
/// save.hasFinished  // true
/// ```
public typealias SingleProcessState = ProcessState<SingleProcess>

// MARK: - Transitions

extension ProcessState {
  /// Starts the given process: the state becomes ``running(_:)`` with it, whatever it was before.
  ///
  /// ```swift
  /// action.start(.save)  // .running(.save)
  /// ```
  ///
  /// - Parameter process: The process that is now running.
  public mutating func start(_ process: ProcessKind) {
    self = .running(process)
  }

  /// Marks the running process as finished; does nothing unless the state is ``running(_:)``.
  ///
  /// ```swift
  /// action.start(.save)
  /// action.finish()  // .finished(.save)
  /// action.finish()  // still .finished(.save)
  /// ```
  public mutating func finish() {
    guard case .running(let process) = self else { return }
    self = .finished(process)
  }

  /// Marks the running process as failed with the given error; does nothing unless the state is ``running(_:)``.
  ///
  /// ```swift
  /// action.start(.save)
  /// action.fail(with: TimeoutError())  // .failed(process: .save, error: TimeoutError())
  /// ```
  ///
  /// - Parameter error: The error the process failed with.
  public mutating func fail(with error: any Error) {
    guard case .running(let process) = self else { return }
    self = .failed(process: process, error: error)
  }
}

// MARK: - Mutators

extension ProcessState {
  /// Sets the state to ``idle``.
  public mutating func setIdle() {
    self = .idle
  }

  /// Sets the state to ``running(_:)`` with the given process.
  ///
  /// - Parameter process: The process that is running.
  public mutating func setRunning(_ process: ProcessKind) {
    self = .running(process)
  }

  /// Sets the state to ``failed(process:error:)`` with the given process and error, whatever it was before.
  ///
  /// Unlike ``fail(with:)``, this does not need a running process.
  ///
  /// ```swift
  /// action.setFailed(.delete, error: TimeoutError())  // .failed(process: .delete, error: TimeoutError())
  /// ```
  ///
  /// - Parameters:
  ///   - process: The process that failed.
  ///   - error: The error it failed with.
  public mutating func setFailed(_ process: ProcessKind, error: any Error) {
    self = .failed(process: process, error: error)
  }

  /// Sets the state to ``finished(_:)`` with the given process, whatever it was before.
  ///
  /// Unlike ``finish()``, this does not need a running process.
  ///
  /// - Parameter process: The process that finished.
  public mutating func setFinished(_ process: ProcessKind) {
    self = .finished(process)
  }
}

// MARK: - Queries

extension ProcessState {
  /// Whether the state is ``idle``.
  public var isIdle: Bool {
    if case .idle = self { true } else { false }
  }

  /// Whether a process is running, whichever it is.
  public var isRunning: Bool {
    if case .running = self { true } else { false }
  }

  /// Whether a process has failed, whichever it is.
  public var hasFailed: Bool {
    if case .failed = self { true } else { false }
  }

  /// Whether a process has finished, whichever it is.
  public var hasFinished: Bool {
    if case .finished = self { true } else { false }
  }

  /// The process the state is about: the running, failed or finished one, or `nil` when ``idle``.
  ///
  /// ```swift
  /// if let process = action.process { log("last action: \(process)") }
  /// ```
  public var process: ProcessKind? {
    switch self {
    case .idle: nil
    case .running(let process), .failed(let process, _), .finished(let process): process
    }
  }

  /// The error of a ``failed(process:error:)`` state, or `nil` in any other state.
  public var error: (any Error)? {
    if case .failed(_, let error) = self { error } else { nil }
  }
}

extension ProcessState where ProcessKind: Equatable {
  /// Whether the given process is running.
  ///
  /// ```swift
  /// Button("Save") { … }.disabled(action.isRunning(.save))
  /// ```
  ///
  /// - Parameter process: The process to ask about.
  /// - Returns: `true` when the state is `.running(process)`.
  public func isRunning(_ process: ProcessKind) -> Bool {
    if case .running(let running) = self { running == process } else { false }
  }

  /// Whether the given process has failed.
  ///
  /// - Parameter process: The process to ask about.
  /// - Returns: `true` when the state is `.failed(process: process, error: _)`.
  public func hasFailed(_ process: ProcessKind) -> Bool {
    if case .failed(let failed, _) = self { failed == process } else { false }
  }

  /// Whether the given process has finished.
  ///
  /// - Parameter process: The process to ask about.
  /// - Returns: `true` when the state is `.finished(process)`.
  public func hasFinished(_ process: ProcessKind) -> Bool {
    if case .finished(let finished) = self { finished == process } else { false }
  }
}

// MARK: - Conformances

// `any Error` is `Sendable` (`Error` refines `Sendable`), so the only requirement is on `ProcessKind`.
extension ProcessState: Sendable where ProcessKind: Sendable {}

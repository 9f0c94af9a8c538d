extension ProcessState where ProcessKind == SingleProcess {
  /// Starts a new process: the state becomes ``running(_:)`` with a fresh ``SingleProcess``.
  ///
  /// ```swift
  /// var save: SingleProcessState = .idle
  /// save.start()  // .running(SingleProcess(#n)), a fresh process
  /// ```
  public mutating func start() {
    start(SingleProcess())
  }

  /// Sets the state to ``running(_:)`` with a fresh ``SingleProcess``.
  public mutating func setRunning() {
    setRunning(SingleProcess())
  }

  /// Sets the state to ``failed(process:error:)`` with a fresh ``SingleProcess`` and the given error.
  ///
  /// To keep the process that was running, use ``fail(with:)`` instead.
  ///
  /// - Parameter error: The error the process failed with.
  public mutating func setFailed(with error: any Error) {
    setFailed(SingleProcess(), error: error)
  }

  /// Sets the state to ``finished(_:)`` with a fresh ``SingleProcess``.
  ///
  /// To keep the process that was running, use ``finish()`` instead.
  public mutating func setFinished() {
    setFinished(SingleProcess())
  }
}

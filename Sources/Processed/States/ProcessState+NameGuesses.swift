// The names a newcomer guesses for the queries of `ProcessState`, which keeps the original package's `has…` names for
// outcomes (`hasFinished`, `hasFailed`) and `is…` for the present (`isIdle`, `isRunning`). Unavailable, so the
// compiler answers a guess with the right name and a fix-it; they are not API and are left out of the documentation.

extension ProcessState {
  /// Unavailable: use ``hasFinished``.
  @available(*, unavailable, renamed: "hasFinished")
  public var isFinished: Bool { fatalError("unavailable") }

  /// Unavailable: use ``hasFailed``.
  @available(*, unavailable, renamed: "hasFailed")
  public var isFailed: Bool { fatalError("unavailable") }

  /// Unavailable: use ``hasFailed`` (`LoadableState` says `isError`; a process has failed).
  @available(*, unavailable, renamed: "hasFailed")
  public var isError: Bool { fatalError("unavailable") }
}

extension ProcessState where ProcessKind: Equatable {
  /// Unavailable: use ``hasFinished(_:)``.
  @available(*, unavailable, renamed: "hasFinished(_:)")
  public func isFinished(_ process: ProcessKind) -> Bool { fatalError("unavailable") }

  /// Unavailable: use ``hasFailed(_:)``.
  @available(*, unavailable, renamed: "hasFailed(_:)")
  public func isFailed(_ process: ProcessKind) -> Bool { fatalError("unavailable") }
}

// The names a newcomer guesses for the queries of `LoadableState`, whose names are all `is…` (`isLoaded`, `isError`).
// Unavailable, so the compiler answers a guess with the right name and a fix-it; not API, and left out of the
// documentation.

extension LoadableState {
  /// Unavailable: use ``isLoaded``.
  @available(*, unavailable, renamed: "isLoaded")
  public var hasLoaded: Bool { fatalError("unavailable") }

  /// Unavailable: use ``isError``.
  @available(*, unavailable, renamed: "isError")
  public var hasFailed: Bool { fatalError("unavailable") }

  /// Unavailable: use ``isError``.
  @available(*, unavailable, renamed: "isError")
  public var isFailed: Bool { fatalError("unavailable") }

  /// Unavailable: use ``isError``.
  @available(*, unavailable, renamed: "isError")
  public var hasError: Bool { fatalError("unavailable") }
}

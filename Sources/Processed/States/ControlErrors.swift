// The control errors are five tiny marker types, so they share one file instead of five.

/// Thrown from a load's block or its `onInterrupt` handler to cancel the load, as if `cancel()` had been called.
///
/// The state is left as it is and nothing more is written by that load. Like the other control errors it is
/// understood by loads and processes alike.
///
/// ```swift
/// $feed.load {
///   guard isSignedIn else { throw CancelLoadable() }
///   return try await api.feed()
/// }
/// ```
public struct CancelLoadable: Error, Sendable, Hashable {
  /// Creates the control error.
  public init() {}
}

/// Thrown from a load's block or its `onInterrupt` handler to reset the load, as if `reset()` had been called.
///
/// The load is cancelled and the state becomes ``LoadableState/absent``. Like the other control errors it is
/// understood by loads and processes alike.
///
/// ```swift
/// $feed.load {
///   guard let user = session.user else { throw ResetLoadable() }
///   return try await api.feed(for: user)
/// }
/// ```
public struct ResetLoadable: Error, Sendable, Hashable {
  /// Creates the control error.
  public init() {}
}

/// Thrown from a process's block or its `onInterrupt` handler to cancel the process, as if `cancel()` had been called.
///
/// The state is left as it is and nothing more is written by that process. Like the other control errors it is
/// understood by loads and processes alike.
///
/// ```swift
/// $save.run {
///   guard hasChanges else { throw CancelProcess() }
///   try await api.save(draft)
/// }
/// ```
public struct CancelProcess: Error, Sendable, Hashable {
  /// Creates the control error.
  public init() {}
}

/// Thrown from a process's block or its `onInterrupt` handler to reset the process, as if `reset()` had been called.
///
/// The process is cancelled and the state becomes ``ProcessState/idle``. Like the other control errors it is
/// understood by loads and processes alike.
///
/// ```swift
/// $save.run {
///   guard isOnline else { throw ResetProcess() }
///   try await api.save(draft)
/// }
/// ```
public struct ResetProcess: Error, Sendable, Hashable {
  /// Creates the control error.
  public init() {}
}

/// An error meaning "this took too long", for throwing from an `onInterrupt` handler.
///
/// It is an ordinary error, not a control error: thrown from `onInterrupt` (or from a block) it ends the load with
/// `.error(TimeoutError())`, or the process with `.failed(process: kind, error: TimeoutError())`.
///
/// ```swift
/// $feed.load(interrupts: [.seconds(2), .seconds(8)]) {
///   try await api.feed()
/// } onInterrupt: { accumulatedDelay in
///   if accumulatedDelay >= .seconds(10) { throw TimeoutError() }
///   showSlowNetworkHint = true
/// }
/// ```
public struct TimeoutError: Error, Sendable, Hashable {
  /// Creates the error.
  public init() {}
}

/// What a state's load is doing right now — beside the state, which says what a screen shows.
///
/// ```swift
/// switch $feed.activity.phase {
/// case .idle: break
/// case .debouncing: status = "…"
/// case .waiting: status = "queued"
/// case .running(let attempt): status = attempt == 1 ? "loading" : "attempt \(attempt)"
/// case .retrying(let attempt): status = "retrying (attempt \(attempt))"
/// case .paused: status = "offline"
/// }
/// let token = $feed.observeActivity { activity in
///   progressBar.value = activity.progress?.fraction
/// }
/// ```
///
/// Read it from a controller (``LoadableController/activity``, ``ProcessController/activity``) and follow it with
/// `observeActivity(_:)`, which has the delivery rules of `observe(_:)`: synchronous, in order, once per change,
/// never after its token's `cancel()` returns. One change is delivered per change of the activity; a step that leaves
/// it equal (the error-equality rule applies to ``lastError``) delivers nothing.
public struct LoadActivity: Sendable, Equatable {
  /// Where a load is in its life.
  public enum Phase: Sendable, Equatable {
    /// No load runs.
    case idle
    /// A debounced load waits before it starts (``LoadOptions/debounce``).
    case debouncing
    /// The load waits for a permit of its ``LoadLimiter``.
    case waiting
    /// Attempt `attempt` runs its block; 1 is the first.
    case running(attempt: Int)
    /// The load waits before attempt `attempt` (``LoadOptions/retry``).
    case retrying(attempt: Int)
    /// The load waits for the network: a cache's fetch under ``NetworkMode/online`` while its cache is offline
    /// (``LoadCache/setOnline(_:)``), and every state that waits for it. It starts (or its retries go on, at the same
    /// attempt) when the network comes back. See <doc:Revalidating>.
    case paused
  }

  /// Where the load is.
  public var phase: Phase
  /// The running load's last reported progress (``LoadProgress/report(fraction:message:isolation:)``); cleared when
  /// the load ends.
  public var progress: LoadProgress?
  /// The error of the last failed attempt while the load retries (and, once retries run out, of the attempt that
  /// failed last — the one the state shows), or of a failed refresh (which keeps the loaded value on screen).
  /// Cleared by a load that succeeds and by `reset()`.
  public var lastError: (any Error)?

  /// Whether a load is under way: ``phase`` is not ``Phase/idle``.
  ///
  /// ```swift
  /// spinner.isHidden = !$feed.activity.isActive
  /// ```
  public var isActive: Bool { phase != .idle }

  /// Creates an activity.
  ///
  /// ```swift
  /// let idle = LoadActivity(phase: .idle)
  /// ```
  ///
  /// - Parameters:
  ///   - phase: Where the load is.
  ///   - progress: Its last reported progress.
  ///   - lastError: The last error kept beside the state.
  public init(phase: Phase = .idle, progress: LoadProgress? = nil, lastError: (any Error)? = nil) {
    self.phase = phase
    self.progress = progress
    self.lastError = lastError
  }

  /// Equal when phase and progress are equal and the errors are equal by the error-equality rule (the same type
  /// and, when it is `Equatable`, equal values).
  public static func == (lhs: LoadActivity, rhs: LoadActivity) -> Bool {
    guard lhs.phase == rhs.phase, lhs.progress == rhs.progress else { return false }
    switch (lhs.lastError, rhs.lastError) {
    case (nil, nil): return true
    case (let left?, let right?): return errorsAreEqual(left, right)
    default: return false
    }
  }
}

/// Whether and how a failed attempt of a load is retried.
///
/// ```swift
/// let options = LoadOptions(retry: .exponential(maxRetries: 5, initialDelay: .milliseconds(500)))
/// ```
///
/// Retry n (n ≥ 1) waits `min(maxDelay, initialDelay × multiplier^(n−1))`, adjusted by the ``Jitter``, on the
/// options' clock; ``constant(_:maxRetries:retryIf:)`` waits the same delay every time. Nothing is written between
/// attempts: the state stays `.loading` (or as it was, when silent), and the last attempt's error is written as
/// usual. A load that is superseded, cancelled or reset stops at once, also while it waits to retry.
///
/// Retried: errors thrown by the block for which `retryIf` is true, including the ``TimeoutError`` of an attempt that
/// ran longer than ``LoadOptions/timeout``. Never retried: cancellation, the control errors (``CancelLoadable``,
/// ``ResetLoadable``, ``CancelProcess``, ``ResetProcess``) and errors thrown from `onInterrupt`. With a
/// ``LoadOptions/limiter``, each attempt waits for a permit and the delay holds none. See <doc:Retrying>.
///
/// Odd input has a defined result: `maxRetries` of zero or less means no retry; a negative delay counts as zero; a
/// `maxDelay` below `initialDelay` caps every delay at `maxDelay`; a `multiplier` below 1, NaN or infinite stops with
/// a precondition failure. `retryIf` is your code: it runs on the main actor after each failed attempt, and what it
/// throws or traps on is yours.
public struct RetryPolicy: Sendable {
  /// How many retries follow the first attempt; zero or negative: none.
  public let maxRetries: Int
  /// The delay before the first retry.
  public let initialDelay: Duration
  /// The factor each later delay grows by.
  public let multiplier: Double
  /// The longest delay.
  public let maxDelay: Duration
  /// How the delays are randomized.
  public let jitter: Jitter
  /// Which errors are retried.
  public let retryIf: @Sendable (any Error) -> Bool

  /// How retry delays are randomized. With `d` the delay before jitter: `.none` waits exactly `d`, `.full` a
  /// uniform duration in `0...d`, `.equal` `d/2` plus a uniform duration in `0...d/2`.
  public enum Jitter: Sendable, Equatable {
    /// Exactly the computed delay.
    case none
    /// Uniform in `0...d`.
    case full
    /// `d/2` plus uniform in `0...d/2`.
    case equal
  }

  /// No retry: a failed attempt ends the load.
  ///
  /// ```swift
  /// let options = LoadOptions(retry: .never)
  /// ```
  public static var never: RetryPolicy {
    RetryPolicy(
      maxRetries: 0, initialDelay: .zero, multiplier: 1, maxDelay: .zero, jitter: .none, retryIf: { _ in false })
  }

  /// `exponential()` with its defaults: 3 retries, 1 s, ×2, at most 30 s, full jitter.
  ///
  /// ```swift
  /// let options = LoadOptions(retry: .standard)
  /// ```
  public static var standard: RetryPolicy { exponential() }

  /// Retries with delays that grow exponentially, capped at `maxDelay`.
  ///
  /// ```swift
  /// let policy = RetryPolicy.exponential(maxRetries: 4, initialDelay: .milliseconds(200))
  /// ```
  ///
  /// - Parameters:
  ///   - maxRetries: How many retries follow the first attempt.
  ///   - initialDelay: The delay before the first retry.
  ///   - multiplier: The factor each later delay grows by.
  ///   - maxDelay: The longest delay.
  ///   - jitter: How the delays are randomized.
  ///   - retryIf: Which errors are retried.
  /// - Returns: The policy.
  public static func exponential(
    maxRetries: Int = 3, initialDelay: Duration = .seconds(1), multiplier: Double = 2,
    maxDelay: Duration = .seconds(30), jitter: Jitter = .full,
    retryIf: @escaping @Sendable (any Error) -> Bool = { _ in true }
  ) -> RetryPolicy {
    precondition(
      multiplier.isFinite && multiplier >= 1,
      "Processed: RetryPolicy.exponential(multiplier:) needs a finite multiplier of at least 1, got \(multiplier)")
    return RetryPolicy(
      maxRetries: maxRetries, initialDelay: initialDelay, multiplier: multiplier, maxDelay: maxDelay, jitter: jitter,
      retryIf: retryIf)
  }

  /// Retries after the same delay every time.
  ///
  /// ```swift
  /// let policy = RetryPolicy.constant(.seconds(2), maxRetries: 3)
  /// ```
  ///
  /// - Parameters:
  ///   - delay: The delay before each retry.
  ///   - maxRetries: How many retries follow the first attempt.
  ///   - retryIf: Which errors are retried.
  /// - Returns: The policy.
  public static func constant(
    _ delay: Duration, maxRetries: Int, retryIf: @escaping @Sendable (any Error) -> Bool = { _ in true }
  ) -> RetryPolicy {
    RetryPolicy(
      maxRetries: maxRetries, initialDelay: delay, multiplier: 1, maxDelay: delay, jitter: .none, retryIf: retryIf)
  }
}

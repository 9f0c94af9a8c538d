/// Caps how many load blocks run at once across the states that share it.
///
/// ```swift
/// let limiter = LoadLimiter(maxConcurrent: 4)
/// let options = LoadOptions(limiter: limiter)
/// ```
///
/// > Important: Declared, not yet implemented: a load with a limiter stops with a precondition failure, and
/// > ``running`` and ``waiting`` stay 0.
public final class LoadLimiter: Sendable {
  /// How many blocks may run at once.
  public let maxConcurrent: Int

  /// Creates a limiter.
  ///
  /// ```swift
  /// let limiter = LoadLimiter(maxConcurrent: 2)
  /// ```
  ///
  /// - Parameter maxConcurrent: How many blocks may run at once; at least 1.
  public init(maxConcurrent: Int) {
    precondition(maxConcurrent >= 1, "Processed: LoadLimiter(maxConcurrent:) needs at least 1, got \(maxConcurrent)")
    self.maxConcurrent = maxConcurrent
  }

  /// The blocks holding a permit now.
  public var running: Int { 0 }

  /// The loads queued for a permit.
  public var waiting: Int { 0 }
}

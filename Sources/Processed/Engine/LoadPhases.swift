/// The phases of one load, as a value that takes an event and returns what to do next.
///
/// A load moves through `attempting(1)`, then — when an attempt fails with an error its retry policy retries —
/// `waitingToRetry(2)`, `attempting(2)` and so on, until `ended`. The engine (`StateHost.execute`) runs each attempt
/// and each wait and feeds what happened back in; this value decides, and knows nothing of tasks, clocks or hosts, so
/// its rules are tested without either. A new policy is a new phase here, not a new branch in every face.
@usableFromInline
struct LoadPhases: Sendable {
  @usableFromInline
  enum Phase: Equatable, Sendable {
    /// Attempt `n` (1 is the first) is running.
    case attempting(Int)
    /// Waiting before attempt `n`.
    case waitingToRetry(Int)
    /// The load has ended.
    case ended
  }

  /// What the engine does after an attempt.
  @usableFromInline
  enum Next<State> {
    /// End the load with this outcome.
    case end(LoadOutcome<State>)
    /// Wait this long on the options' clock, then run the next attempt (nothing is written meanwhile).
    case retry(after: Duration)
  }

  @usableFromInline private(set) var phase: Phase = .attempting(1)
  @usableFromInline let retry: RetryPolicy

  @usableFromInline
  init(retry: RetryPolicy) {
    self.retry = retry
  }

  /// The attempt running now ended with `outcome`; `error` is what its block threw, if anything.
  ///
  /// Retried: an error for which the policy's `retryIf` is true, while retries are left. Never retried:
  /// cancellation and the control errors (their outcomes are not failures).
  @usableFromInline
  mutating func attemptEnded<State, Generator: RandomNumberGenerator>(
    _ outcome: LoadOutcome<State>, thrown error: (any Error)?, using generator: inout Generator
  ) -> Next<State> {
    guard case .attempting(let attempt) = phase else {
      preconditionFailure("Processed: an attempt ended while the load was \(phase)")
    }
    guard case .write = outcome, let error, !LoadOutcome<State>.isControl(error), attempt <= retry.maxRetries,
      retry.retryIf(error)
    else {
      phase = .ended
      return .end(outcome)
    }
    phase = .waitingToRetry(attempt + 1)
    return .retry(after: retry.delay(beforeRetry: attempt, using: &generator))
  }

  /// The wait before the next attempt is over: it starts.
  @usableFromInline
  mutating func retryDelayEnded() {
    guard case .waitingToRetry(let attempt) = phase else {
      preconditionFailure("Processed: a retry delay ended while the load was \(phase)")
    }
    phase = .attempting(attempt)
  }

  /// The load stopped from outside (superseded, cancelled, reset, its owner gone).
  @usableFromInline
  mutating func stopped() {
    phase = .ended
  }
}

extension LoadOutcome {
  /// Whether `error` is cancellation or a control error, which end a load without failing it.
  @usableFromInline
  static func isControl(_ error: any Error) -> Bool {
    switch error {
    case is CancellationError, is CancelLoadable, is CancelProcess, is ResetLoadable, is ResetProcess: true
    default: false
    }
  }
}

extension RetryPolicy {
  /// The delay before retry `n` (n ≥ 1): `d(n) = min(maxDelay, initialDelay × multiplier^(n−1))`, then jittered —
  /// `.none`: `d`; `.full`: uniform in `0...d`; `.equal`: `d/2` plus uniform in `0...d/2`. Never negative.
  @usableFromInline
  func delay<Generator: RandomNumberGenerator>(beforeRetry n: Int, using generator: inout Generator) -> Duration {
    let initial = Self.seconds(of: initialDelay)
    let cap = Self.seconds(of: maxDelay)
    let grown = initial * pow(multiplier, Double(max(0, n - 1)))
    let base = max(0, min(cap, grown.isFinite ? grown : cap))
    let seconds: Double
    switch jitter {
    case .none: seconds = base
    case .full: seconds = Double.random(in: 0...base, using: &generator)
    case .equal: seconds = base / 2 + Double.random(in: 0...(base / 2), using: &generator)
    }
    return .nanoseconds(Int64(min(seconds * 1e9, Double(Int64.max))))
  }

  private static func seconds(of duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) + Double(attoseconds) / 1e18
  }

  /// `base` raised to `exponent`, without Foundation.
  private func pow(_ base: Double, _ exponent: Double) -> Double {
    var result = 1.0
    var remaining = Int(exponent)
    var factor = base
    while remaining > 0 {
      if remaining & 1 == 1 { result *= factor }
      factor *= factor
      remaining >>= 1
    }
    return result
  }
}

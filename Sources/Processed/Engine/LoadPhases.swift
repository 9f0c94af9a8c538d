/// The phases of one load, as a value that takes an event and returns what to do next: debounce, start state, network,
/// permit, attempt, retry delay, end.
///
/// It knows nothing of tasks, clocks or hosts (``PhaseDriver`` performs the steps), so its rules are tested
/// without them, and a new policy is a new phase here. See Documentation/LoadPhases.md.
@usableFromInline
struct LoadPhases: Sendable {
  @usableFromInline
  enum Phase: Equatable, Sendable {
    /// Waiting out the debounce delay; nothing has been written.
    case debouncing
    /// The debounce is over and the start state is being written.
    case starting
    /// Waiting for the network before attempt `n` (a cache's fetch under ``NetworkMode/online``; the driver waits
    /// only while the cache is offline).
    case waitingForNetwork(Int)
    /// Waiting for a limiter's permit before attempt `n`.
    case waitingForPermit(Int)
    /// Attempt `n` (1 is the first) is running.
    case attempting(Int)
    /// Waiting before attempt `n`.
    case waitingToRetry(Int)
    /// The load has ended.
    case ended
  }

  /// What the engine does next.
  @usableFromInline
  enum Next<State> {
    /// Sleep the debounce delay on the options' clock, then report ``LoadPhases/debounceEnded()``.
    case debounce(Duration)
    /// Write the start state (unless silent, or already that), then report ``LoadPhases/startStateWritten()``.
    case writeStartState
    /// Wait until the network is up (at once when it is), then report ``LoadPhases/networkAvailable()``.
    case awaitNetwork
    /// Wait for a permit of the options' limiter, then report ``LoadPhases/permitAcquired()``.
    case acquirePermit
    /// Run attempt `n` (holding the permit, if any, until its block returns), then report
    /// ``LoadPhases/attemptEnded(_:thrown:using:)``.
    case attempt(Int)
    /// Sleep this long on the options' clock (nothing is written meanwhile), then report
    /// ``LoadPhases/retryDelayEnded()``.
    case retry(after: Duration)
    /// End the load with this outcome.
    case end(LoadOutcome<State>)
  }

  @usableFromInline private(set) var phase: Phase = .attempting(1)
  let retry: RetryPolicy
  /// Whether each attempt waits for a limiter's permit.
  let usesLimiter: Bool
  /// Whether each attempt waits for the network first (before its permit: a paused fetch holds none).
  let usesNetwork: Bool

  @usableFromInline
  init(retry: RetryPolicy, usesLimiter: Bool = false, usesNetwork: Bool = false) {
    self.retry = retry
    self.usesLimiter = usesLimiter
    self.usesNetwork = usesNetwork
  }

  /// The load starts. `debounce`: the delay it waits first (its start state is written after it), or `nil` when it
  /// starts at once (its start state was written when it was called).
  @usableFromInline
  mutating func begin<State>(debounce: Duration?) -> Next<State> {
    if let debounce {
      phase = .debouncing
      return .debounce(debounce)
    }
    return beginAttempt(1)
  }

  /// The debounce delay is over and the load is still current: it starts as an ordinary load.
  @usableFromInline
  mutating func debounceEnded<State>() -> Next<State> {
    guard phase == .debouncing else {
      preconditionFailure("Processed: a debounce ended while the load was \(phase)")
    }
    phase = .starting
    return .writeStartState
  }

  /// The start state of a debounced load was written.
  @usableFromInline
  mutating func startStateWritten<State>() -> Next<State> {
    guard phase == .starting else {
      preconditionFailure("Processed: a start state was written while the load was \(phase)")
    }
    return beginAttempt(1)
  }

  /// The network is up for the next attempt: it starts, after a permit when there is a limiter.
  @usableFromInline
  mutating func networkAvailable<State>() -> Next<State> {
    guard case .waitingForNetwork(let attempt) = phase else {
      preconditionFailure("Processed: the network came back while the load was \(phase)")
    }
    return permitOrAttempt(attempt)
  }

  /// The permit for the next attempt was given.
  @usableFromInline
  mutating func permitAcquired<State>() -> Next<State> {
    guard case .waitingForPermit(let attempt) = phase else {
      preconditionFailure("Processed: a permit was given while the load was \(phase)")
    }
    phase = .attempting(attempt)
    return .attempt(attempt)
  }

  /// The attempt running now ended with `outcome`; `error` is what its block threw, if anything (a timeout counts
  /// as a thrown ``TimeoutError``).
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

  /// The wait before the next attempt is over: it starts, after a permit when there is a limiter.
  @usableFromInline
  mutating func retryDelayEnded<State>() -> Next<State> {
    guard case .waitingToRetry(let attempt) = phase else {
      preconditionFailure("Processed: a retry delay ended while the load was \(phase)")
    }
    return beginAttempt(attempt)
  }

  /// The phase as ``LoadActivity`` reports it: the one mapping from the engine's phases to the public ones.
  @usableFromInline
  var activity: LoadActivity.Phase {
    switch phase {
    case .debouncing, .starting: .debouncing
    case .waitingForNetwork: .paused
    case .waitingForPermit: .waiting
    case .attempting(let attempt): .running(attempt: attempt)
    case .waitingToRetry(let attempt): .retrying(attempt: attempt)
    case .ended: .idle
    }
  }

  /// The activity phase a load starts in, reported when it is called: `.debouncing`, `.paused` (`offline`: it waits
  /// for the network), `.waiting` for a permit, or `.running(attempt: 1)`.
  @usableFromInline
  static func firstActivity(debounce: Duration?, usesLimiter: Bool, offline: Bool = false) -> LoadActivity.Phase {
    var phases = LoadPhases(retry: .never, usesLimiter: usesLimiter, usesNetwork: offline)
    let _: Next<Never> = phases.begin(debounce: debounce)
    return phases.activity
  }

  /// The load stopped from outside (superseded, cancelled, reset, its owner gone).
  @usableFromInline
  mutating func stopped() {
    phase = .ended
  }

  private mutating func beginAttempt<State>(_ attempt: Int) -> Next<State> {
    if usesNetwork {
      phase = .waitingForNetwork(attempt)
      return .awaitNetwork
    }
    return permitOrAttempt(attempt)
  }

  private mutating func permitOrAttempt<State>(_ attempt: Int) -> Next<State> {
    if usesLimiter {
      phase = .waitingForPermit(attempt)
      return .acquirePermit
    }
    phase = .attempting(attempt)
    return .attempt(attempt)
  }
}

extension LoadOutcome {
  /// Whether `error` is cancellation or a control error, which end a load without failing it.
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
    // Past about 292 years the nanoseconds leave `Int64` (and `Double(Int64.max)` rounds up to 2⁶³, so clamping to
    // it would still trap): whole seconds there, saturating at `DeadlineSleep.longest`.
    guard seconds < 9e9 else { return .seconds(Int64(min(seconds, 9e18))) }
    return .nanoseconds(Int64(seconds * 1e9))
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

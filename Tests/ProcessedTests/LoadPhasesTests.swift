import ProcessedTesting
import Testing

@testable import Processed

/// The phases of a load, driven directly: no tasks, no time.
@Suite struct LoadPhasesTests {
  typealias Outcome = LoadOutcome<LoadableState<Int>>
  struct Failure: Error, Equatable {}

  func failure() -> (Outcome, any Error) { (.write(.error(Failure())), Failure()) }

  @Test func failedAttemptsAreRetriedUntilTheRetriesRunOut() {
    var phases = LoadPhases(retry: .exponential(maxRetries: 2, initialDelay: .seconds(1), jitter: .none))
    var generator = MBRandom(seed: 1)
    var delays: [Duration] = []
    while true {
      let (outcome, error) = failure()
      switch phases.attemptEnded(outcome, thrown: error, using: &generator) {
      case .retry(let delay):
        delays.append(delay)
        let next: LoadPhases.Next<LoadableState<Int>> = phases.retryDelayEnded()
        #expect(next.isAttempt)
        continue
      case .end(let outcome):
        guard case .write(.error(let error)) = outcome else {
          Issue.record("expected the last attempt's error")
          return
        }
        #expect(error is Failure)
      default:
        Issue.record("unexpected step")
      }
      break
    }
    #expect(delays == [.seconds(1), .seconds(2)])
    #expect(phases.phase == .ended)
  }

  @Test func theDelaysGrowByTheMultiplierUpToTheCap() {
    let policy = RetryPolicy.exponential(
      maxRetries: 10, initialDelay: .milliseconds(500), multiplier: 3, maxDelay: .seconds(10), jitter: .none)
    var generator = MBRandom(seed: 2)
    let delays = (1...5).map { policy.delay(beforeRetry: $0, using: &generator) }
    #expect(delays == [.milliseconds(500), .milliseconds(1_500), .milliseconds(4_500), .seconds(10), .seconds(10)])
    let constant = RetryPolicy.constant(.seconds(2), maxRetries: 3)
    #expect(
      (1...3).map { constant.delay(beforeRetry: $0, using: &generator) } == [.seconds(2), .seconds(2), .seconds(2)])
  }

  @Test(arguments: [RetryPolicy.Jitter.full, .equal])
  func jitteredDelaysStayWithinTheirBounds(_ jitter: RetryPolicy.Jitter) {
    let policy = RetryPolicy.exponential(
      maxRetries: 10, initialDelay: .seconds(1), maxDelay: .seconds(8), jitter: jitter)
    var generator = MBRandom(seed: 3)
    for retry in 1...6 {
      let full = min(Duration.seconds(8), .seconds(1 << (retry - 1)))
      let low = jitter == .full ? Duration.zero : full / 2
      var seen: Set<Duration> = []
      for _ in 0..<200 {
        let delay = policy.delay(beforeRetry: retry, using: &generator)
        #expect(delay >= low && delay <= full)
        seen.insert(delay)
      }
      #expect(seen.count > 100)  // random, not a constant
    }
  }

  @Test func cancellationControlErrorsAndRejectedErrorsAreNeverRetried() {
    let policy = RetryPolicy.constant(.seconds(1), maxRetries: 5) { !($0 is TimeoutError) }
    var generator = MBRandom(seed: 4)
    let cases: [(Outcome, any Error)] = [
      (.done, CancellationError()), (.cancel, CancelLoadable()), (.reset, ResetLoadable()),
      (.cancel, CancelProcess()), (.reset, ResetProcess()), (.write(.error(TimeoutError())), TimeoutError()),
    ]
    for (outcome, error) in cases {
      var phases = LoadPhases(retry: policy)
      guard case .end = phases.attemptEnded(outcome, thrown: error, using: &generator) else {
        Issue.record("\(error) was retried")
        continue
      }
      #expect(phases.phase == .ended)
    }
  }

  @Test func oddPoliciesHaveDefinedResults() {
    var generator = MBRandom(seed: 5)
    var none = LoadPhases(retry: .exponential(maxRetries: -3))
    let (outcome, error) = failure()
    guard case .end = none.attemptEnded(outcome, thrown: error, using: &generator) else {
      Issue.record("a negative maxRetries retried")
      return
    }
    let negative = RetryPolicy.exponential(initialDelay: .seconds(-5), maxDelay: .seconds(-1), jitter: .none)
    #expect(negative.delay(beforeRetry: 1, using: &generator) == .zero)
    let inverted = RetryPolicy.exponential(initialDelay: .seconds(10), maxDelay: .seconds(2), jitter: .none)
    #expect(inverted.delay(beforeRetry: 1, using: &generator) == .seconds(2))
    let huge = RetryPolicy.exponential(maxRetries: 100, initialDelay: .seconds(1), multiplier: 1e300, jitter: .none)
    #expect(huge.delay(beforeRetry: 50, using: &generator) == .seconds(30))
  }

  @Test func aDebouncedLoadWaitsThenWritesItsStartStateThenWaitsForTheNetworkAndAPermitBeforeEachAttempt() {
    typealias Next = LoadPhases.Next<LoadableState<Int>>
    var phases = LoadPhases(retry: .constant(.seconds(1), maxRetries: 1), usesLimiter: true, usesNetwork: true)
    var generator = MBRandom(seed: 6)
    var steps: [String] = []
    var activities: [LoadActivity.Phase] = []
    var next: Next = phases.begin(debounce: .milliseconds(300))
    while true {
      activities.append(phases.activity)
      switch next {
      case .debounce(let delay):
        steps.append("debounce \(delay)")
        #expect(phases.phase == .debouncing)
        next = phases.debounceEnded()
      case .writeStartState:
        steps.append("start state")
        next = phases.startStateWritten()
      case .awaitNetwork:
        steps.append("network")
        next = phases.networkAvailable()
      case .acquirePermit:
        steps.append("permit")
        next = phases.permitAcquired()
      case .attempt(let attempt):
        steps.append("attempt \(attempt)")
        #expect(phases.phase == .attempting(attempt))
        let (outcome, error) = failure()
        next = phases.attemptEnded(outcome, thrown: error, using: &generator)
      case .retry(let delay):
        steps.append("retry after \(delay)")
        #expect(phases.phase == .waitingToRetry(2))
        next = phases.retryDelayEnded()
      case .end:
        steps.append("end")
      }
      if case .end = next { break }
    }
    #expect(
      steps == [
        "debounce 0.3 seconds", "start state", "network", "permit", "attempt 1", "retry after 1.0 seconds", "network",
        "permit", "attempt 2",
      ])
    // A retry paused for the network goes on at the same attempt; its permit is asked for after the network.
    #expect(
      activities == [
        .debouncing, .debouncing, .paused, .waiting, .running(attempt: 1), .retrying(attempt: 2), .paused, .waiting,
        .running(attempt: 2),
      ])
    #expect(LoadPhases.firstActivity(debounce: nil, usesLimiter: true, offline: true) == .paused)
    #expect(LoadPhases.firstActivity(debounce: nil, usesLimiter: true) == .waiting)
    #expect(LoadPhases.firstActivity(debounce: .seconds(1), usesLimiter: true) == .debouncing)
    #expect(LoadPhases.firstActivity(debounce: nil, usesLimiter: false) == .running(attempt: 1))
    #expect(phases.phase == .ended)
  }

  @Test func aLoadWithoutDebounceOrLimiterStartsWithItsFirstAttempt() {
    var phases = LoadPhases(retry: .never)
    let next: LoadPhases.Next<LoadableState<Int>> = phases.begin(debounce: nil)
    guard case .attempt(1) = next else {
      Issue.record("expected the first attempt, got \(next)")
      return
    }
    #expect(phases.phase == .attempting(1))
    phases.stopped()
    #expect(phases.phase == .ended)
  }

  @Test func aMultiplierBelowOneIsAPreconditionFailure() async {
    await #expect(processExitsWith: .failure) {
      _ = RetryPolicy.exponential(multiplier: 0.5)
    }
    await #expect(processExitsWith: .failure) {
      _ = RetryPolicy.exponential(multiplier: .nan)
    }
  }
}

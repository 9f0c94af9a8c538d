internal import Processed

/// A clock whose time moves only when a test moves it: give it to a load's options, and a test controls every wait
/// the load makes — its timeout, retry delays, debounce, interrupts, loading delay and minimum loading time —
/// without sleeping on real time.
///
/// ```swift
/// let clock = TestClock()
/// let task: Task<Void, Never> = model.$feed.load(options: LoadOptions(timeout: .seconds(10), clock: clock)) {
///   try await api.feed()
/// }
/// try await clock.waitForSleepers(1)  // the timeout's timer is sleeping
/// clock.advance(by: .seconds(10))    // the load ends with .error(TimeoutError())
/// await task.value
/// ```
///
/// - ``advance(by:)`` and ``advance(to:)`` move ``now`` and wake, in deadline order, every task whose deadline has
///   been reached. A sleep whose deadline is not after ``now`` returns at once.
/// - ``waitForSleepers(_:timeLimit:)`` suspends until the given number of tasks sleep on the clock, so a test knows
///   the load is waiting before it moves time — no yield loops, no real sleeps.
/// - A sleeping task that is cancelled throws `CancellationError` at once and no longer counts as sleeping; a
///   timeout reached by an advance cancels its block within that advance. So ``sleeperCount`` and
///   ``waitForSleepers(_:timeLimit:)`` count the tasks that will wake when time moves.
/// - A `LoadCache`'s own timers (its garbage collection) never count as sleepers, though `advance` fires them: one
///   clock may drive a cache and its loads, and `waitForSleepers(1)` waits for the request.
///
/// Thread-safe: a test may advance the clock from any task.
public final class TestClock: Clock, Sendable {
  /// A point in a ``TestClock``'s time: the duration since the clock's start.
  public struct Instant: InstantProtocol, Hashable, Sendable {
    /// The time since the clock's start (the clock starts at `.zero` unless told otherwise).
    public var offset: Duration

    /// Creates an instant at `offset` from the clock's start.
    ///
    /// ```swift
    /// let later = TestClock.Instant(offset: .seconds(5))
    /// ```
    ///
    /// - Parameter offset: The time since the clock's start.
    public init(offset: Duration) {
      self.offset = offset
    }

    /// The instant `duration` later (earlier when negative); saturates instead of overflowing.
    ///
    /// ```swift
    /// let deadline = clock.now.advanced(by: .seconds(1))
    /// ```
    ///
    /// - Parameter duration: The distance.
    /// - Returns: The instant.
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: Self.saturatingSum(offset, duration))
    }

    /// The duration from this instant to `other`; saturates instead of overflowing.
    ///
    /// ```swift
    /// let elapsed = start.duration(to: clock.now)
    /// ```
    ///
    /// - Parameter other: The later instant.
    /// - Returns: The duration.
    public func duration(to other: Instant) -> Duration {
      Self.clamped(other.offset - offset)
    }

    /// Whether `lhs` is earlier than `rhs`.
    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }

    private static let largest = Duration.seconds(Int64.max)
    private static let smallest = Duration.seconds(Int64.min)

    /// Durations hold 128 bits of attoseconds, so sums of two durations within ±`Int64.max` seconds never overflow;
    /// clamping keeps every instant in that range.
    private static func clamped(_ duration: Duration) -> Duration {
      min(max(duration, smallest), largest)
    }

    private static func saturatingSum(_ lhs: Duration, _ rhs: Duration) -> Duration {
      clamped(lhs + rhs)
    }
  }

  /// Why ``waitForSleepers(_:timeLimit:)`` gave up: what it waited for and what it saw when it gave up.
  ///
  /// For example: "waited 30s for 2 tasks to sleep on the TestClock; saw 1, sleeping until +5s (now +2s)".
  public struct TimeLimitExceeded: Error, CustomStringConvertible {
    /// What was waited for, and the sleepers the clock had when the wait gave up: how many, and until when.
    public let description: String
  }

  private struct Sleeper {
    let id: UInt64
    let deadline: Instant
    let continuation: CheckedContinuation<Void, any Error>
    /// The sleep's `WakeAction`: run when the deadline is reached, before any sleeper is resumed.
    let onWake: (@Sendable () -> Void)?
    /// `false` for a cache's own timer (`HousekeepingSleep`): woken by `advance`, never counted as a sleeper.
    let counts: Bool
  }

  private struct SleeperWaiter {
    let id: UInt64
    let count: Int
    /// Waits for a cache's own timers (``waitForCacheTimers(_:timeLimit:)``), not for sleepers.
    let timers: Bool
    let continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var now: Instant
    var nextID: UInt64 = 0
    var sleepers: [Sleeper] = []
    /// Sleeps that have an id but no continuation yet; `true` once cancelled (their handler ran first).
    var registering: [UInt64: Bool] = [:]
    var waiters: [SleeperWaiter] = []

    /// The sleepers that count: every one but a cache's own timers.
    var count: Int { sleepers.count { $0.counts } }
    /// A cache's own timers sleeping now.
    var timerCount: Int { sleepers.count - count }

    func count(timers: Bool) -> Int { timers ? timerCount : count }

    /// Removes and returns the waiters satisfied by the number of sleepers now.
    mutating func satisfiedWaiters() -> [SleeperWaiter] {
      let counts = (sleepers: count, timers: timerCount)
      let isSatisfied = { (waiter: SleeperWaiter) in waiter.count <= (waiter.timers ? counts.timers : counts.sleepers) }
      let satisfied = waiters.filter(isSatisfied)
      waiters.removeAll(where: isSatisfied)
      return satisfied
    }

    /// The sleepers now, for a failure message: "1, sleeping until +5s (now +2s)".
    var sleepersDescription: String {
      let clock = "(now \(WaitDescription.instant(now)))"
      let timers = sleepers.count - count
      let housekeeping = timers == 0 ? "" : "; and \(timers) cache \(timers == 1 ? "timer" : "timers")"
      if count == 0 { return "none \(clock)\(housekeeping)" }
      let deadlines = sleepers.filter(\.counts).map(\.deadline).sorted().map(WaitDescription.instant)
        .joined(separator: ", ")
      return "\(count), sleeping until \(deadlines) \(clock)\(housekeeping)"
    }
  }

  private let state: LockedBox<State>

  /// Creates a clock whose time starts at `now`.
  ///
  /// ```swift
  /// let clock = TestClock()
  /// ```
  ///
  /// - Parameter now: The clock's initial time.
  public init(now: Instant = Instant(offset: .zero)) {
    state = LockedBox(State(now: now))
  }

  /// The clock's current time; it moves only through ``advance(by:)`` and ``advance(to:)``.
  public var now: Instant { state.withLock { $0.now } }

  /// `.zero`: a test clock is exact.
  public var minimumResolution: Duration { .zero }

  /// The number of tasks sleeping on the clock now: tasks that will wake when time moves. A task stops counting when
  /// it wakes, and when it is cancelled (at once, in its cancellation handler).
  ///
  /// ```swift
  /// #expect(clock.sleeperCount == 0)  // nothing waits any more
  /// ```
  public var sleeperCount: Int { state.withLock { $0.count } }

  /// Suspends until ``now`` reaches `deadline` (returns at once when it already has). Throws `CancellationError`
  /// at once when the calling task is cancelled, before or during the sleep.
  ///
  /// ```swift
  /// try await clock.sleep(until: clock.now.advanced(by: .seconds(1)))
  /// ```
  ///
  /// - Parameters:
  ///   - deadline: The instant to wake at.
  ///   - tolerance: Ignored: a test clock is exact.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    let id: UInt64? = state.withLock { state in
      if deadline <= state.now { return nil }
      state.nextID &+= 1
      state.registering[state.nextID] = false
      return state.nextID
    }
    guard let id else { return }
    let onWake = WakeAction.current
    let counts = !HousekeepingSleep.isActive
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let (satisfied, wakeNow, cancelled) = state.withLock { state -> ([SleeperWaiter], Bool, Bool) in
          if state.registering.removeValue(forKey: id) == true { return ([], false, true) }
          if deadline <= state.now { return ([], true, false) }
          state.sleepers.append(
            Sleeper(id: id, deadline: deadline, continuation: continuation, onWake: onWake, counts: counts))
          return (state.satisfiedWaiters(), false, false)
        }
        // Continuations are resumed outside the lock.
        if cancelled {
          continuation.resume(throwing: CancellationError())
        } else if wakeNow {
          continuation.resume()
        }
        for waiter in satisfied { waiter.continuation.resume() }
      }
    } onCancel: {
      // Synchronous: once `cancel()` returns, the task no longer counts as a sleeper.
      let removed: Sleeper? = state.withLock { state in
        if let index = state.sleepers.firstIndex(where: { $0.id == id }) {
          return state.sleepers.remove(at: index)
        }
        if state.registering[id] != nil { state.registering[id] = true }
        return nil  // not registered yet, or already woken
      }
      removed?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time forward by `duration` and wakes, in deadline order, every task whose deadline has been reached.
  ///
  /// A load's timeout that is reached here cancels its block before `advance` returns, so a block sleeping on this
  /// clock (a server that never answers) no longer counts in ``sleeperCount`` once `advance` returns.
  ///
  /// ```swift
  /// clock.advance(by: .seconds(5))
  /// ```
  ///
  /// - Parameter duration: How far; must not be negative.
  public func advance(by duration: Duration) {
    precondition(duration >= .zero, "TestClock.advance(by:) needs a non-negative duration, got \(duration)")
    wake(
      state.withLock { state -> [Sleeper] in
        state.now = state.now.advanced(by: duration)
        return Self.removeDue(from: &state)
      })
  }

  /// Moves time forward to `instant` and wakes, in deadline order, every task whose deadline has been reached.
  ///
  /// ```swift
  /// clock.advance(to: start.advanced(by: .seconds(3)))
  /// ```
  ///
  /// - Parameter instant: The new time; must not be earlier than ``now``.
  public func advance(to instant: Instant) {
    wake(
      state.withLock { state -> [Sleeper] in
        precondition(instant >= state.now, "TestClock.advance(to:) cannot move time backwards")
        state.now = instant
        return Self.removeDue(from: &state)
      })
  }

  /// Suspends until at least `count` tasks sleep on the clock. Throws ``TimeLimitExceeded`` when that has not
  /// happened after `timeLimit` of real time — so a bug fails the test instead of hanging it, with how many tasks
  /// slept and until when — and `CancellationError` when the calling task is cancelled.
  ///
  /// Counts only tasks that will wake when time moves: a cancelled sleep stops counting at once, and a load's timeout
  /// reached by ``advance(by:)`` cancels its block within `advance`. Right after the advance that times an attempt
  /// out, `waitForSleepers(1)` therefore waits for the retry delay, not for the timed-out block:
  ///
  /// ```swift
  /// try await clock.waitForSleepers(2)  // the block and the timeout
  /// clock.advance(by: .seconds(5))      // the attempt times out; its block is cancelled
  /// try await clock.waitForSleepers(1)  // the retry delay
  /// ```
  ///
  /// - Parameters:
  ///   - count: The number of sleeping tasks to wait for.
  ///   - timeLimit: The real time after which the wait fails. Generous by default (30 s), so that a correct test
  ///     does not fail on a busy machine (a sanitizer build, a loaded CI runner).
  public func waitForSleepers(_ count: Int, timeLimit: Duration = .seconds(30)) async throws {
    try await wait(for: count, timers: false, timeLimit: timeLimit)
  }

  /// Suspends until at least `count` of the clock's sleeps are a `LoadCache`'s own timers (its garbage collector,
  /// which ``waitForSleepers(_:timeLimit:)`` never counts): for a test of garbage collection, before it moves time
  /// past `gcTime`. Throws ``TimeLimitExceeded`` after `timeLimit` of real time, and `CancellationError` when the
  /// calling task is cancelled.
  ///
  /// ```swift
  /// let cache = LoadCache(gcTime: .seconds(60), clock: clock)
  /// cache.set(1, for: key)                  // idle: collected 60 s from now
  /// try await clock.waitForCacheTimers(1)  // the collector sleeps
  /// clock.advance(by: .seconds(60))
  /// ```
  ///
  /// - Parameters:
  ///   - count: The number of a cache's timers to wait for.
  ///   - timeLimit: The real time after which the wait fails.
  public func waitForCacheTimers(_ count: Int, timeLimit: Duration = .seconds(30)) async throws {
    try await wait(for: count, timers: true, timeLimit: timeLimit)
  }

  /// The sleepers now, for a failure message: "1, sleeping until +5s (now +2s)".
  var sleepersNow: String { state.withLock { $0.sleepersDescription } }

  /// A cache's own timers sleeping on the clock now (see ``waitForCacheTimers(_:timeLimit:)``).
  public var cacheTimerCount: Int { state.withLock { $0.timerCount } }

  private func wait(for count: Int, timers: Bool, timeLimit: Duration) async throws {
    let id: UInt64? = state.withLock { state in
      if state.count(timers: timers) >= count { return nil }
      state.nextID &+= 1
      return state.nextID
    }
    guard let id else { return }
    let limit = Task {
      // The one real-time wait: a safety limit, never the way a test learns that something happened.
      try? await Task.sleep(for: timeLimit)
      let seen = self.state.withLock { $0.sleepersDescription }
      let what = timers ? "cache \(count == 1 ? "timer" : "timers")" : count == 1 ? "task" : "tasks"
      let waited = "waited \(WaitDescription.duration(timeLimit)) for \(count) \(what) to sleep"
      self.failWaiter(id, with: TimeLimitExceeded(description: "\(waited) on the TestClock; saw \(seen)"))
    }
    defer { limit.cancel() }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let ready = state.withLock { state -> Bool in
          if state.count(timers: timers) >= count { return true }
          state.waiters.append(SleeperWaiter(id: id, count: count, timers: timers, continuation: continuation))
          return false
        }
        if ready { continuation.resume() }
      }
    } onCancel: {
      failWaiter(id, with: CancellationError())
    }
  }

  private func failWaiter(_ id: UInt64, with error: any Error) {
    let waiter: SleeperWaiter? = state.withLock { state in
      guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
      return state.waiters.remove(at: index)
    }
    waiter?.continuation.resume(throwing: error)
  }

  /// Runs the woken sleeps' wake actions (a timeout cancelling its block), then resumes the sleepers: outside the lock,
  /// so that a cancelled block's handler can remove its own sleep.
  private func wake(_ woken: [Sleeper]) {
    for sleeper in woken { sleeper.onWake?() }
    for sleeper in woken { sleeper.continuation.resume() }
  }

  private static func removeDue(from state: inout State) -> [Sleeper] {
    let now = state.now
    let due = state.sleepers.filter { $0.deadline <= now }
    state.sleepers.removeAll { $0.deadline <= now }
    // Stable: equal deadlines wake in the order they went to sleep.
    return due.enumerated().sorted { ($0.element.deadline, $0.offset) < ($1.element.deadline, $1.offset) }
      .map(\.element)
  }
}

internal import Processed

/// Why `task.value(timeLimit:clock:)` gave up: how long it waited and, when given a ``TestClock``, the
/// tasks sleeping on it then — a bare `await task.value` that never returns hangs a test run with no message.
///
/// For example: "waited 30s for a task to end; the TestClock's sleepers: none (now +0s)".
public struct TaskTimeLimitExceeded: Error, CustomStringConvertible {
  /// What was waited for, and what the clock showed when the wait gave up.
  public let description: String
}

extension Task {
  /// The task's value, or ``TaskTimeLimitExceeded`` when the task has not ended after `timeLimit` of real time: a
  /// test awaits a load with a time limit that fails with what it saw, instead of hanging.
  ///
  /// ```swift
  /// let task: Task<Void, Never> = model.$feed.load(options: LoadOptions(timeout: .seconds(5), clock: clock)) {
  ///   try await api.feed()
  /// }
  /// try await clock.waitForSleepers(2)
  /// clock.advance(by: .seconds(5))
  /// try await task.value(timeLimit: .seconds(10), clock: clock)
  /// ```
  ///
  /// Cancelling the calling task stops the wait (it throws `CancellationError`); the awaited task is not cancelled.
  ///
  /// - Parameters:
  ///   - timeLimit: The real time after which the wait fails. Generous by default (30 s), so that a correct test does
  ///     not fail on a busy machine.
  ///   - clock: A clock whose sleepers the failure message describes.
  /// - Returns: The task's value; a throwing task's error is rethrown.
  public func value(timeLimit: Duration = .seconds(30), clock: TestClock? = nil) async throws -> Success {
    let outcome = TaskOutcome<Success>()
    // Both race to settle the one continuation: the task's end, or the safety limit (the one real-time wait).
    let waiter = Task<Void, Never> {
      let result = await self.result
      outcome.settle(.success(result.map { $0 }.mapError { $0 as any Error }))
    }
    let limit = Task<Void, Never> {
      try? await Task<Never, Never>.sleep(for: timeLimit)
      guard !Task<Never, Never>.isCancelled else { return }
      let seen = clock.map { "; the TestClock's sleepers: \($0.sleepersNow)" } ?? ""
      outcome.settle(
        .failure(
          TaskTimeLimitExceeded(description: "waited \(WaitDescription.duration(timeLimit)) for a task to end\(seen)")))
    }
    defer {
      limit.cancel()
      waiter.cancel()
    }
    let result = try await withTaskCancellationHandler {
      try await outcome.value()
    } onCancel: {
      outcome.settle(.failure(_Concurrency.CancellationError()))
    }
    return try result.get()
  }
}

/// The first of a task's result, a time limit and a cancellation: one continuation, settled once.
private final class TaskOutcome<Success: Sendable>: Sendable {
  typealias Settled = Result<Result<Success, any Error>, any Error>
  private let state = LockedBox<(settled: Settled?, continuation: CheckedContinuation<Settled, Never>?)>((nil, nil))

  func settle(_ result: Settled) {
    let continuation = state.withLock { state -> CheckedContinuation<Settled, Never>? in
      guard state.settled == nil else { return nil }
      state.settled = result
      defer { state.continuation = nil }
      return state.continuation
    }
    continuation?.resume(returning: result)
  }

  func value() async throws -> Result<Success, any Error> {
    let settled = await withCheckedContinuation { (continuation: CheckedContinuation<Settled, Never>) in
      let settled = state.withLock { state -> Settled? in
        if let settled = state.settled { return settled }
        state.continuation = continuation
        return nil
      }
      if let settled { continuation.resume(returning: settled) }
    }
    return try settled.get()
  }
}

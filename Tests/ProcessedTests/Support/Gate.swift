import Testing

@testable import Processed

/// A one-shot gate: tasks that `wait()` suspend until someone calls `open()`. Lets a test decide exactly when a
/// load's block may go on, without sleeping.
@MainActor
final class Gate {
  private var isOpen = false
  private var waiters: [CheckedContinuation<Void, Never>] = []
  /// Callers of `untilWaiting(_:)`: how many waiters each expects.
  private var watchers: [(id: Int, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
  private var nextWatcherID = 0
  /// Fired when a task arrives at the gate and when it opens (see ``Wake/arrivals(at:)``).
  let changes = Signal()

  init() {}

  /// Suspends until the gate opens (returns at once if it is open). Ignores cancellation, like real network code
  /// that does not cooperate.
  func wait() async {
    if isOpen { return }
    await withCheckedContinuation {
      waiters.append($0)
      resumeWatchers()
      changes.fire()
    }
  }

  /// The number of tasks waiting.
  var waiting: Int { waiters.count }

  func open() {
    isOpen = true
    let pending = waiters
    waiters = []
    for waiter in pending { waiter.resume() }
    resumeWatchers()
    changes.fire()
  }

  /// Suspends until exactly `count` tasks wait at the gate: resumed by the `wait()` or `open()` that makes it so,
  /// not by polling. Records an issue and returns if that has not happened within the ``SafetyLimit`` (so that a bug
  /// fails the test instead of hanging it — never a "long enough" wait).
  func untilWaiting(
    _ count: Int, timeLimit: Duration = SafetyLimit.standard, sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    if waiters.count == count { return }
    let id = nextWatcherID
    nextWatcherID += 1
    let deadline = SafetyLimit.start(timeLimit) { [self] in
      guard let index = self.watchers.firstIndex(where: { $0.id == id }) else { return }
      Issue.record("\(count) waiting at the gate not reached in time", sourceLocation: sourceLocation)
      self.watchers.remove(at: index).continuation.resume()
    }
    await withCheckedContinuation { watchers.append((id, count, $0)) }
    deadline.cancel()
  }

  private func resumeWatchers() {
    let count = waiters.count
    let ready = watchers.filter { $0.count == count }
    if ready.isEmpty { return }
    watchers.removeAll { $0.count == count }
    for watcher in ready { watcher.continuation.resume() }
  }
}

/// Suspends until the calling task is cancelled (returns at once if it is): a block that waits for its load to be
/// cancelled, on no clock at all. Returns anyway at the ``SafetyLimit``, so that a load that is never cancelled (a
/// bug) ends and fails its test instead of hanging it.
func untilCancelled(timeLimit: Duration = SafetyLimit.standard) async {
  let waiter = CancellationWaiter()
  let deadline = SafetyLimit.start(timeLimit) { waiter.cancel() }
  await withTaskCancellationHandler {
    await withCheckedContinuation { waiter.park($0) }
  } onCancel: {
    waiter.cancel()
  }
  deadline.cancel()
}

/// The continuation `untilCancelled()` parks, resumed once: by the cancellation or the deadline, or at once if one
/// came first.
private final class CancellationWaiter: Sendable {
  private let state = LockedBox<(cancelled: Bool, continuation: CheckedContinuation<Void, Never>?)>((false, nil))

  func park(_ continuation: CheckedContinuation<Void, Never>) {
    let resumeNow = state.withLock { state in
      if state.cancelled { return true }
      state.continuation = continuation
      return false
    }
    if resumeNow { continuation.resume() }
  }

  func cancel() {
    let parked = state.withLock { state in
      state.cancelled = true
      defer { state.continuation = nil }
      return state.continuation
    }
    parked?.resume()
  }
}

import Dispatch
import Processed

@testable import Processed

/// A serial executor on a dispatch queue of its own, which can tell whether the calling code runs on it (its own
/// isolation check, independent of the Swift runtime's).
final class QueueExecutor: SerialExecutor, @unchecked Sendable {
  private let queue: DispatchQueue
  private let key = DispatchSpecificKey<ObjectIdentifier>()

  init(_ label: String) {
    queue = DispatchQueue(label: label)
    queue.setSpecific(key: key, value: ObjectIdentifier(self))
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
  }

  func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    UnownedSerialExecutor(ordinary: self)
  }

  /// Whether the caller runs on this executor's queue.
  var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == ObjectIdentifier(self) }

  func checkIsolated() {
    precondition(isCurrent, "not on \(queue.label)")
  }
}

/// A gate any actor can wait at: `wait()` suspends until `open()`. Ignores cancellation, like network code that does
/// not cooperate.
final class ActorGate: Sendable {
  private struct State {
    var isOpen = false
    var waiters: [CheckedContinuation<Void, Never>] = []
    var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let box = LockedBox(State())

  func wait(isolation: isolated (any Actor)? = #isolation) async {
    await withCheckedContinuation(isolation: isolation) { continuation in
      let (resumeNow, watchers) = box.withLock { state in
        if state.isOpen { return (true, [CheckedContinuation<Void, Never>]()) }
        state.waiters.append(continuation)
        return (false, Self.takeWatchers(&state))
      }
      if resumeNow { continuation.resume() }
      for watcher in watchers { watcher.resume() }
    }
  }

  /// Returns once `count` tasks wait at the gate (or it opened).
  func untilWaiting(_ count: Int, isolation: isolated (any Actor)? = #isolation) async {
    await withCheckedContinuation(isolation: isolation) { continuation in
      let now = box.withLock { state in
        if state.isOpen || state.waiters.count >= count { return true }
        state.watchers.append((count, continuation))
        return false
      }
      if now { continuation.resume() }
    }
  }

  private static func takeWatchers(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
    let ready = state.watchers.filter { state.isOpen || state.waiters.count >= $0.count }
    state.watchers.removeAll { state.isOpen || state.waiters.count >= $0.count }
    return ready.map(\.continuation)
  }

  func open() {
    let (waiters, watchers) = box.withLock { state in
      state.isOpen = true
      defer { state.waiters = [] }
      return (state.waiters, Self.takeWatchers(&state))
    }
    for waiter in waiters { waiter.resume() }
    for watcher in watchers { watcher.resume() }
  }

  var waiting: Int { box.withLock { $0.waiters.count } }
}

/// What observers record, outside the actor: an observer that captured the actor itself, kept by a token the actor
/// holds, would keep the actor alive for good (a cycle LeakSanitizer reports).
final class OwnerRecord {
  let executor: QueueExecutor
  var history: [LoadableState<Int>] = []
  var jobHistory: [ProcessState<SingleProcess>] = []
  var offExecutor = 0

  init(_ executor: QueueExecutor) { self.executor = executor }

  /// Counts a run of user code off the executor.
  func check() {
    if !executor.isCurrent { offExecutor += 1 }
  }
}

/// An actor on a `QueueExecutor` with an actor-owned loadable and process, recording where each piece of user code
/// ran.
actor FeedOwner {
  let executor: QueueExecutor
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

  @IsolatedLoadable var feed: LoadableState<Int> = .absent
  @IsolatedProcess var job: ProcessState<SingleProcess> = .idle

  let record: OwnerRecord
  var tokens: [ObservationToken] = []

  init(_ label: String = "owner") {
    executor = QueueExecutor(label)
    record = OwnerRecord(executor)
  }

  /// Every state the observer of `feed` saw, in order.
  var history: [LoadableState<Int>] { record.history }
  var jobHistory: [ProcessState<SingleProcess>] { record.jobHistory }
  /// How many pieces of user code ran off the executor.
  var offExecutor: Int { record.offExecutor }

  /// Counts a run of user code off the executor.
  func check() { record.check() }

  func observeAll() {
    let record = record
    tokens.append(
      $feed.observe { state in
        record.check()
        record.history.append(state)
      })
    tokens.append(
      $job.observe { state in
        record.check()
        record.jobHistory.append(state)
      })
  }

  /// Starts a load of `value` that waits for `gate` (if any) and returns its task.
  @discardableResult
  func startLoad(_ value: Int, after gate: ActorGate? = nil, options: LoadOptions? = nil) -> Task<Void, Never> {
    $feed.load(options: options) {
      self.check()
      await gate?.wait()
      self.check()
      return value
    }
  }

  /// Loads `value` after `gate` and waits.
  func load(_ value: Int, after gate: ActorGate? = nil, options: LoadOptions? = nil) async {
    await $feed.load(options: options) {
      self.check()
      await gate?.wait()
      self.check()
      return value
    }
  }

  func cancel() { $feed.cancel() }
  var feedOwnerID: ObjectIdentifier? { _feed.storage.ownerID }
  func reset() { $feed.reset() }
  var state: LoadableState<Int> { feed }
}

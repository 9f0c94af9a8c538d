public import CProcessedAtomics
import Dispatch

/// Every ``LoadCache`` method from any isolation, in one order.
///
/// The entries live on the main actor. A method called there runs at once; one called elsewhere is queued here, in
/// call order, and run on the main actor — a write (`set`, `invalidate…`, `remove…`) returns at once, a read
/// (`value(for:)`, `count`) waits until it has run. Every method that runs on the main actor first runs the calls
/// queued before it. So the calls take effect in one order that keeps each caller's own order, and a read sees every
/// call that was made before it: the cache's methods are linearizable, whichever isolation calls them.
extension CacheStore {
  /// Runs `call` now, on the main actor, after the calls queued before it, when the caller runs there, and returns
  /// `true`; otherwise returns `false` (the caller queues it with ``enqueue(_:)``). `call` does not escape: the main
  /// actor's call allocates nothing for it.
  @usableFromInline
  nonisolated func runsOnMainActor(_ call: @MainActor (CacheStore) -> Void) -> Bool {
    guard MainQueue.isCurrent else { return false }
    MainActor.assumeIsolated {
      runQueuedCalls()
      call(self)
    }
    return true
  }

  /// Runs `read` on the main actor after the calls queued before it, and returns what it returned; a caller off the
  /// main actor waits for it (blocking its thread until the main actor has run it).
  @usableFromInline
  nonisolated func read<T: Sendable>(_ read: @escaping @MainActor @Sendable (CacheStore) -> T) -> T {
    if MainQueue.isCurrent {
      return MainActor.assumeIsolated {
        runQueuedCalls()
        return read(self)
      }
    }
    let answer = LockedBox<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    enqueue { store in
      let value = read(store)
      answer.withLock { $0 = value }
      done.signal()
    }
    done.wait()
    guard let value = answer.withLock({ $0 }) else {
      preconditionFailure("Processed: a cache read off the main actor ended without an answer")
    }
    return value
  }

  /// Queues `call` and makes sure a main-actor task will run the queue.
  @usableFromInline
  nonisolated func enqueue(_ call: @escaping @MainActor @Sendable (CacheStore) -> Void) {
    processed_cache_note_off_main()
    let schedules = offMain.withLock { queue -> Bool in
      queue.calls.append(call)
      guard !queue.isScheduled else { return false }
      queue.isScheduled = true
      return true
    }
    guard schedules else { return }
    Task { @MainActor in
      self.offMain.withLock { $0.isScheduled = false }
      self.runQueuedCalls()
    }
  }

  /// Runs the calls queued off the main actor, in order (also those queued while they run).
  @inlinable @MainActor
  func runQueuedCalls() {
    guard processed_cache_was_used_off_main() else { return }
    runQueuedCallsSlowly()
  }

  @usableFromInline @MainActor
  func runQueuedCallsSlowly() {
    while let call = offMain.withLock({ queue -> (@MainActor @Sendable (CacheStore) -> Void)? in
      guard queue.head < queue.calls.count else {
        queue.calls.removeAll(keepingCapacity: true)
        queue.head = 0
        return nil
      }
      defer { queue.head += 1 }
      return queue.calls[queue.head]
    }) {
      call(self)
    }
  }
}

/// The calls made off the main actor that wait for it (see `CacheStore+OffMain.swift`).
@usableFromInline
struct OffMainCalls: Sendable {
  var calls: [@MainActor @Sendable (CacheStore) -> Void] = []
  /// The next call to run.
  var head = 0
  /// Whether a main-actor task that runs the queue is on its way.
  var isScheduled = false

  init() {}
}

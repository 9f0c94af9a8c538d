public import CProcessedAtomics

/// Every ``LoadCache`` method from any isolation, in one order.
///
/// The entries live on the main actor. A write (`set`, `invalidate…`, `remove…`) called there runs at once; one called
/// elsewhere is queued here, in call order, and run on the main actor, and returns at once. The reads (`value(for:)`,
/// `count`) are main-actor methods (awaited from elsewhere: no thread blocks). Every method that runs on the main actor
/// first runs the calls queued before it; a read off the main actor (a `value(for:options:fetch:)` hit, an actor-owned
/// state's cached load) uses the published values only while no queued call waits (`PublishedTable`), and hops to the
/// main actor otherwise. So the calls take effect in one order that keeps each caller's own order, and a read sees
/// every call that was made before it: the cache's methods are linearizable, whichever isolation calls them.
extension CacheStore {
  /// Runs `call` with `argument` on the main actor, after the calls queued before it: at once when the caller runs
  /// there, otherwise queued (the caller returns at once). `call` should capture nothing (its values come in
  /// `argument`): then a call on the main actor allocates nothing.
  @inlinable
  nonisolated func perform<Argument: Sendable>(
    _ argument: Argument, _ call: @escaping @MainActor @Sendable (CacheStore, Argument) -> Void
  ) {
    if MainQueue.isCurrent {
      runQueuedCallsOnMain()
      callAsMainActor(call, self, argument)
      return
    }
    enqueue { store in call(store, argument) }
  }

  /// ``runQueuedCalls()`` from code that found the main actor current: nothing but a relaxed load until some cache
  /// was used off the main actor.
  @inlinable
  nonisolated func runQueuedCallsOnMain() {
    guard processed_cache_was_used_off_main() else { return }
    callAsMainActor({ store, _ in store.runQueuedCallsSlowly() }, self, ())
  }

  /// Queues `call` and makes sure a main-actor task will run the queue.
  /// `changesValues`: the call may change what the published rows show (every write does; a background refresh does
  /// not, until its fetch ends), so reads off the main actor go there until it has run.
  @usableFromInline
  nonisolated func enqueue(
    _ call: @escaping @MainActor @Sendable (CacheStore) -> Void, changesValues: Bool = true
  ) {
    processed_cache_note_off_main()
    // The call's time: a value it writes is as old as the call, not as the main actor's turn to run it.
    let calledAt = clock.now()
    // Counted before it is queued: from now on a read off the main actor hops there, where the call runs first.
    if changesValues { published.withLock { $0.unappliedCalls += 1 } }
    let schedules = offMain.withLock { queue -> Bool in
      queue.calls.append((call, changesValues, calledAt))
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

  /// The time of the call made off the main actor that runs now, once: the value it writes is written at that time;
  /// a write its observers make meanwhile (a main-actor call of their own) is written at the time it runs.
  @usableFromInline @MainActor
  func takeQueuedCallTime() -> Duration? {
    guard let calledAt = queuedCallTime else { return nil }
    queuedCallTime = nil
    return calledAt
  }

  @usableFromInline @MainActor
  func runQueuedCallsSlowly() {
    while let queued = offMain.withLock({ queue -> OffMainCalls.Call? in
      guard queue.head < queue.calls.count else {
        queue.calls.removeAll(keepingCapacity: true)
        queue.head = 0
        return nil
      }
      defer { queue.head += 1 }
      return queue.calls[queue.head]
    }) {
      queuedCallTime = queued.calledAt
      queued.call(self)
      queuedCallTime = nil
      if queued.changesValues { published.withLock { $0.unappliedCalls -= 1 } }
    }
  }
}

/// The calls made off the main actor that wait for it (see `CacheStore+OffMain.swift`).
@usableFromInline
struct OffMainCalls: Sendable {
  /// A queued call, whether it counts in ``PublishedTable/unappliedCalls``, and the cache clock's time when it was
  /// made (``CacheStore/queuedCallTime``).
  typealias Call = (call: @MainActor @Sendable (CacheStore) -> Void, changesValues: Bool, calledAt: Duration)

  var calls: [Call] = []
  /// The next call to run.
  var head = 0
  /// Whether a main-actor task that runs the queue is on its way.
  var isScheduled = false

  init() {}
}

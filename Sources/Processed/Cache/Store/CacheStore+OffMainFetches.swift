public import CProcessedAtomics

/// A `value(for:options:fetch:)` miss off the main actor, decided where the caller runs.
///
/// The entries live on the main actor, where a miss would take three turns of the main thread (make the entry and
/// start its fetch, start the fetch's task, write the answer). But once every entry of the cache is published
/// (``PublishedTable/isComplete``), a key without a row has no entry, and its miss needs nothing of the main actor:
/// under the table's lock the caller joins the key's fetch in flight in ``PublishedTable/offMain``, or starts one.
///
/// Invariants, which keep the cache's methods linearizable:
/// - A key in `offMain` has no entry and no row while its fetch runs. The main actor takes the key's work out of the
///   table before it looks the key up (``storedEntry(_:)``, ``take(_:)``) or goes over the entries
///   (``settleAllOffMain()``), and makes the entry from it in the same turn: it adopts the fetch in flight, callers
///   and all, or holds its outcome. So a main-actor method sees every miss decided before it, and rules on the fetch
///   as on its own (latest wins, `set` and `invalidate` overtake it).
/// - A fetch's end, under the lock, publishes its value's row and leaves its outcome in `offMain`, then ends its
///   callers. A fetch the main actor adopted ends nothing itself: its entry does.
/// - An outcome stays in `offMain` until the main actor needs its key, or until `gcTime` after its fetch ended, as an
///   entry with no bound state would: the sweeper (``sweepOffMainOutcomes()``) drops it then, off the main actor. So a
///   service that only calls `value(for:)` never wakes the main actor.
/// - The last caller cancelled cancels a fetch that is still the key's work; an adopted fetch's entry decides for its
///   own.
extension CacheStore {
  /// One look at the published table for a `value(for:)` call, under one lock: the key's value when it is published;
  /// else, when the miss is decided off the main actor, the key's fetch in flight joined or a new one started; else
  /// ``PublishedLookup/main``. The miss is the main actor's to decide when the table is not complete or is behind a
  /// queued call, the key has an entry, the key is persisted, or the options need an entry's phases (retry, a timeout,
  /// debounce, a limiter, waiting for the network).
  ///
  /// There is no check for the main queue: `value(for:)` is a nonisolated `async` function, so its body runs on the
  /// global executor even when a main-actor caller awaits it (the check cost a `dispatch_get_specific`, some 45 ns per
  /// miss, and was never true in the test suite). Decided here, a miss needs nothing of the main actor wherever it runs.
  @inlinable
  nonisolated func lookUp<V>(
    _ key: CacheKey<V>, options: LoadOptions?, fetch: @escaping @Sendable () async throws -> V
  ) -> PublishedLookup<V> {
    // Keyed by the value type and the key's parts as the key holds them: a lookup builds no array.
    let published = PublishedKey(valueType: ObjectIdentifier(V.self), parts: key.storage)
    // The row is read under the lock and not retained on the way out; the caller reads the clock after it, and only
    // for a value: a miss reads no clock.
    return self.published.withLock { table -> PublishedLookup<V> in
      if let row = table.row(published) {
        guard row.hasValue else { return .main }
        return .hit(row.value(as: V.self), writtenAt: row.writtenAt, invalidated: row.invalidated)
      }
      return Self.decideMiss(in: &table, published, key, options: options, fetch: fetch)
    }
  }

  /// ``lookUp(_:options:fetch:)`` for a key without a row, under the table's lock: the key has no entry once the table
  /// is complete and no queued call waits, and the miss is decided here. Not inlined: the hit's frame stays small.
  @inlinable @inline(never)
  nonisolated static func decideMiss<V>(
    in table: inout PublishedTable, _ published: PublishedKey, _ key: CacheKey<V>, options: LoadOptions?,
    fetch: @escaping @Sendable () async throws -> V
  ) -> PublishedLookup<V> {
    guard key.persistence == nil, options == nil || options?.fetchIsBlockAlone == true, table.isComplete,
      table.unappliedCalls == 0, table.isOnline || options?.networkMode == .always
    else { return .main }
    if let work = table.offMain[published] {
      // A key's work without a row is a fetch in flight.
      guard let running = work as? OffMainFetch<V>, running.endedAt == nil else { return .main }
      let callers = running.madeCallers
      return .joined(running, callers, caller: callers.join())
    }
    if !processed_cache_was_used_off_main() { processed_cache_note_off_main() }
    let running = OffMainFetch(key: key, published: published, fetch: fetch)
    table.offMain[published] = running
    return .started(running)
  }

  /// The value of a `value(for:)` call whose ``lookUp(_:options:fetch:)`` found no published value: the outcome of the
  /// fetch it started or joined off the main actor, or the main actor's answer. One function, not inlined, so that the
  /// hit's inlined `value(for:)` stays small (it is then inlined into its caller, and its frame needs no allocation).
  @inlinable @inline(never)
  nonisolated func valueAfterMiss<V>(
    _ lookup: PublishedLookup<V>, for key: CacheKey<V>, options: LoadOptions?,
    fetch: @escaping @Sendable () async throws -> V
  ) async throws -> V {
    if case .main = lookup { return try await valueOrFetch(for: key, options: options, fetch: fetch).wait() }
    return try await valueOffMain(lookup)
  }

  /// The outcome of a fetch off the main actor that the caller started (`.started`) or joined (`.joined`), as
  /// ``lookUp(_:options:fetch:)`` found it; `.hit` and `.main` are the caller's.
  @inlinable
  nonisolated func valueOffMain<V>(_ lookup: PublishedLookup<V>) async throws -> V {
    let running: OffMainFetch<V>
    var waiting: (CallerFetch<V>, UInt64)?
    switch lookup {
    case .joined(let fetch, let callers, let caller):
      (running, waiting) = (fetch, (callers, caller))
    case .started(let fetch):
      running = fetch
      // The starter (``OffMainFetch/starterWaits``): it takes the outcome of a fetch that ended while it started it, or
      // joins the callers — unless the main actor adopted the fetch meanwhile and joined it for the starter. One lock
      // keeps the task and takes the starter's part.
      let task = makeTask(running)
      let ended = self.published.withLock { _ -> (outcome: Result<V, any Error>?, cancels: Bool) in
        running.task = task
        running.starterWaits = false
        if running.isEnded { return (running.outcome(), false) }
        let callers = running.madeCallers
        waiting = (callers, running.starterID != 0 ? running.starterID : callers.join())
        return (nil, running.isCancelled)
      }
      if ended.cancels { task.cancel() }
      if let outcome = ended.outcome { return try outcome.get() }
    case .hit, .main:
      preconditionFailure("Processed: valueOffMain(_:) called for a hit or the main actor's miss")
    }
    guard let (callers, caller) = waiting else { preconditionFailure("a caller that did not end joined the callers") }
    return try await callers.wait(caller) {
      self.offMainCallerLeft(running)
    }
  }

  /// Makes `running`'s task; the caller keeps it in ``OffMainFetch/task`` (and cancels it if ``OffMainFetch/isCancelled``
  /// was set meanwhile). Where the toolchain has `Task.immediate`, the fetch starts on the caller's thread and runs there
  /// until it first suspends: a fetch that answers without suspending ends before its caller would park.
  @inlinable
  nonisolated func makeTask<V>(_ running: OffMainFetch<V>) -> Task<Void, Never> {
    if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
      return Task.immediate { await self.runOffMain(running) }
    } else {
      return Task { await self.runOffMain(running) }
    }
  }

  /// Cancels `running`'s task, or has it cancelled once it is made.
  @usableFromInline
  nonisolated func cancel<V>(_ running: OffMainFetch<V>) {
    let task = published.withLock { _ -> Task<Void, Never>? in
      running.isCancelled = true
      return running.task
    }
    task?.cancel()
  }

  /// The outcome of `running`, which an entry adopted: what the entry's fetch returns. Cancelling it cancels `running`.
  @usableFromInline
  nonisolated func adoptedOutcome<V>(of running: OffMainFetch<V>) async throws -> V {
    try await withTaskCancellationHandler {
      try await withCheckedContinuation {
        (continuation: CheckedContinuation<Result<any Sendable, any Error>, Never>) in
        let ended = published.withLock { _ -> Result<any Sendable, any Error>? in
          if let outcome = running.adoptedOutcome { return outcome }
          running.adopter = continuation
          return nil
        }
        if let ended { continuation.resume(returning: ended) }
      }.get() as! V
    } onCancel: {
      cancel(running)
    }
  }

  /// The task of an ``OffMainFetch``: runs its block, then ends the fetch (``offMainFetchEnded``).
  @inlinable
  nonisolated func runOffMain<V>(_ running: OffMainFetch<V>) async {
    let outcome: Result<V, any Error>
    do {
      outcome = .success(try await running.fetch())
    } catch {
      outcome = .failure(error)
    }
    offMainFetchEnded(running, outcome)
  }

  /// An ``OffMainFetch`` ended with `outcome`. Still the key's work (not adopted, not cancelled): its value's row is
  /// published and its outcome left for the main actor (with a `gcTime` above zero; otherwise the key's work goes),
  /// then its callers end. A block that threw a control error
  /// (`CancellationError`, `CancelLoadable`, `ResetLoadable`) keeps nothing and ends them with `CancellationError`.
  /// Adopted: the outcome goes to the adopting entry's fetch.
  @inlinable
  nonisolated func offMainFetchEnded<V>(_ running: OffMainFetch<V>, _ outcome: Result<V, any Error>) {
    let kept: Result<V, any Error>?
    switch outcome {
    case .success: kept = outcome
    case .failure(let error):
      if case .write = LoadOutcome<Void>(error: error, failure: { _ in () }) { kept = outcome } else { kept = nil }
    }
    // With a `gcTime` of zero an outcome nobody uses goes at once: the callers get it, and it is not kept (and no clock
    // is read).
    let keeps = kept != nil && gcTime > .zero
    let now = keeps ? clock.now() : .zero
    let deadline = now + gcTime
    // Version 0: no entry's yet (the entry made from the outcome has its own).
    let value: PublishedValueOf<V>? =
      if keeps, case .success(let value)? = kept {
        PublishedValueOf(value, writtenAt: now, invalidated: false, version: 0)
      } else {
        nil
      }
    var adopter: CheckedContinuation<Result<any Sendable, any Error>, Never>?
    // The work it replaces and the outcomes it drops are released after the lock: the values' `deinit`s are the user's
    // code.
    let ended = self.published.withLock {
      table -> (work: any OffMainWork, callers: CallerFetch<V>?, sweeps: Bool, dropped: (any OffMainWork)?)? in
      // One lookup for the check and the removal.
      guard let index = table.offMain.index(forKey: running.published), table.offMain.values[index] === running else {
        adopter = running.adopter
        running.adopter = nil
        running.adoptedOutcome = outcome.map { $0 as any Sendable }
        return nil
      }
      var sweeps = false
      var dropped: (any OffMainWork)?
      running.isEnded = true
      running.endedValue = value
      switch kept {
      case .success(let answer)? where value == nil: running.droppedValue = answer
      case .failure(let error)?: running.endedError = error
      default: break
      }
      if keeps {
        running.endedAt = now
        table.lastEndedStamp += 1
        running.endedStamp = table.lastEndedStamp
        table.expiring.append((running.published, running.endedStamp, deadline))
        sweeps = !table.isSweeping
        table.isSweeping = true
        // The oldest outcome goes now if it expired: with a short `gcTime`, the tables stay small without the sweeper.
        dropped = table.dropFirstExpired(before: now)
        table.rows[running.published] = value ?? PublishedValue.absent
      } else {
        // Nothing to keep: a block that threw a control error, or a `gcTime` of zero (the key stays without a row).
        table.offMain.remove(at: index)
      }
      return (running, running.callers, sweeps, dropped)
    }
    guard let ended else {
      adopter?.resume(returning: outcome.map { $0 as any Sendable })
      return
    }
    ended.callers?.finish(kept ?? .failure(CancellationError()))
    if ended.sweeps { startSweeper() }
  }

  /// Starts the sweeper of expired outcomes (``PublishedTable/isSweeping`` was just set).
  @usableFromInline
  nonisolated func startSweeper() {
    let task = Task { await self.sweepOffMainOutcomes() }
    published.withLock { table in
      if table.isSweeping { table.sweeper = task }
    }
  }

  /// Drops each outcome in ``PublishedTable/offMain`` that the main actor has not taken once its deadline has passed,
  /// sleeping on the cache's clock until the next one — at least a second between passes, so that a short `gcTime`
  /// does not start a task per fetch — until none is left or the store is closed.
  nonisolated func sweepOffMainOutcomes() async {
    var lastPass = clock.now()
    while let next = published.withLock({ $0.nextExpiry() }) {
      do {
        try await HousekeepingSleep.$isActive.withValue(true) {
          try await clock.sleep(max(next, lastPass + .seconds(1)))
        }
      } catch {
        published.withLock { $0.stopSweeping() }
        return
      }
      lastPass = clock.now()
      let dropped = published.withLock { $0.dropExpired(before: lastPass + .nanoseconds(1)) }
      _ = dropped  // Released after the lock: the values' `deinit`s are the user's code.
    }
  }

  /// A caller of `running` was cancelled, and it was the last to wait: a fetch still the key's work is cancelled; the
  /// entry that adopted it decides for it on the main actor.
  @usableFromInline
  nonisolated func offMainCallerLeft<V>(_ running: OffMainFetch<V>) {
    let cancels = self.published.withLock { table -> Bool? in
      // An ended fetch has ended its callers: nothing to cancel.
      guard !running.isEnded else { return false }
      // Adopted by an entry, which decides for it; one lookup for the check and the removal.
      guard let index = table.offMain.index(forKey: running.published), table.offMain.values[index] === running else {
        return nil
      }
      guard !running.starterWaits, !(running.callers?.hasWaiters ?? false) else { return false }
      table.offMain.remove(at: index)
      return true
    }
    switch cancels {
    case true?: cancel(running)
    case false?: break
    case nil:
      // Adopted: the entry runs the fetch for the callers, made when the main actor took it.
      Task { @MainActor in
        if let callers = running.callers { self.entry(for: running.key)?.callerLeft(callers) }
      }
    }
  }

  /// The main actor is about to look up `published`'s entry: the key's work off the main actor, if any, becomes it.
  @MainActor
  func settleOffMain(_ published: PublishedKey) {
    let expiredBefore = clock.now() - gcTime
    let work = self.published.withLock { table -> (work: any OffMainWork, expired: Bool)? in
      guard let work = table.offMain.removeValue(forKey: published) else { return nil }
      return (work, table.tookOffMain(work, published, expiredBefore: expiredBefore))
    }
    if let work, !work.expired { work.work.settle(in: self) }
  }

  /// A new entry of `published`'s key is being inserted: its row claims the key in the table (from now on its misses
  /// go to the main actor), and the key's work off the main actor, decided since the key was looked up, is returned
  /// for the entry to take over.
  @MainActor
  func claimOffMain(_ published: PublishedKey) -> (any OffMainWork)? {
    let expiredBefore = clock.now() - gcTime
    let work = self.published.withLock { table -> (work: any OffMainWork, expired: Bool)? in
      defer { if table.rows[published] == nil { table.rows[published] = PublishedValue.absent } }
      guard let work = table.offMain.removeValue(forKey: published) else { return nil }
      return (work, table.tookOffMain(work, published, expiredBefore: expiredBefore))
    }
    guard let work, !work.expired else { return nil }
    return work.work
  }

  /// The main actor is about to go over the entries: every key's work off the main actor becomes its entry.
  @MainActor
  func settleAllOffMain() {
    guard hasPublished, processed_cache_was_used_off_main() else { return }
    let expiredBefore = clock.now() - gcTime
    let all = published.withLock { table -> [(work: any OffMainWork, expired: Bool)] in
      guard !table.offMain.isEmpty else { return [] }
      let taken = table.offMain
      table.offMain.removeAll()
      table.expiring.removeAll()
      table.expiringHead = 0
      return taken.map { key, work in (work, table.tookOffMain(work, key, expiredBefore: expiredBefore)) }
    }
    for work in all where !work.expired { work.work.settle(in: self) }
  }
}

extension LoadOptions {
  /// Whether a fetch with these options is its block alone — no retry, timeout, debounce or limiter — so that a miss
  /// off the main actor may run it without an entry's phases.
  @inlinable
  var fetchIsBlockAlone: Bool {
    retry.maxRetries <= 0 && timeout == nil && debounce == nil && limiter == nil
  }
}

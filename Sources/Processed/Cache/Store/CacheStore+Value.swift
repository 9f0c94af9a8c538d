extension CacheStore {
  /// ``LoadCache/value(for:options:fetch:)``, on the main actor, where the entries are: the entry's value, or the
  /// fetch the caller joined, which it waits for where it runs (its outcome resumes it there, with no hop back to the
  /// main actor).
  @usableFromInline @MainActor
  func valueOrFetch<V>(
    for key: CacheKey<V>, options: LoadOptions?, fetch: @escaping @Sendable () async throws -> V
  ) async throws -> ValueOrFetch<V> {
    try Task.checkCancellation()
    runQueuedCalls()
    if key.persistence != nil, needsRestore(key) {
      await restore(key)
      try Task.checkCancellation()
    }
    let entry = makeEntry(for: key)
    startPublishing(entry)
    let staleTime = Freshness.staleTime(given: options, declared: nil, cache: self.staleTime)
    if let value = entry.value {
      // Stale: the value now, and the entry refreshed in the background.
      if !entry.isFresh(staleTime: staleTime) { entry.refreshStale(options: options, fetch: fetch) }
      return .value(value)
    }
    // A miss: the fetch in flight is joined, else one starts; the caller ends once the entry holds its outcome.
    let callers = entry.callerFetch()
    let caller = callers.join()
    if !entry.isFetching {
      entry.fetch(callers.answering(fetch), options: options, priority: nil)
      entry.ownsFetch = true
    }
    return .fetch(callers, caller: caller, entry: entry)
  }
}

extension CacheStore {
  /// A `value(for:options:fetch:)` caller off the main actor returned `key`'s stale value: its refresh runs on the main
  /// actor, after the calls queued before it (it changes no value that a reader sees, so readers need not wait for it).
  @usableFromInline
  nonisolated func refreshInBackground<V>(
    _ key: CacheKey<V>, options: LoadOptions?, fetch: @escaping @Sendable () async throws -> V
  ) {
    let refresh = { @MainActor @Sendable (store: CacheStore) in
      guard let entry = store.entry(for: key), entry.value != nil,
        !entry.isFresh(staleTime: Freshness.staleTime(given: options, declared: nil, cache: store.staleTime))
      else { return }
      entry.refreshStale(options: options, fetch: fetch)
    }
    if MainQueue.isCurrent {
      runQueuedCallsOnMain()
      callAsMainActor({ store, refresh in refresh(store) }, self, refresh)
    } else {
      enqueue(refresh, changesValues: false)
    }
  }
}

/// What a `value(for:options:fetch:)` call found on the main actor: the entry's value, or the fetch it joined (as
/// caller `caller` of `callers`), which it then waits for off the main actor.
@usableFromInline
enum ValueOrFetch<V: Sendable>: Sendable {
  case value(V)
  case fetch(CallerFetch<V>, caller: UInt64, entry: CacheEntry<V>)

  /// The value, or the joined fetch's outcome once the entry holds it. Cancelling the caller ends it at once; the last
  /// cancelled caller tells the entry, on the main actor.
  @usableFromInline
  func wait() async throws -> V {
    switch self {
    case .value(let value):
      return value
    case .fetch(let callers, let caller, let entry):
      // Holds the entry strongly (a weak reference would give it a side table, kept by a task still queued at exit).
      return try await callers.wait(caller) {
        Task { @MainActor in entry.callerLeft(callers) }
      }
    }
  }
}

extension CacheEntry {
  /// A `value(for:options:fetch:)` caller got the entry's stale value: the entry fetches with `fetch` (a fetch in
  /// flight is joined), for no caller and no state of its own.
  func refreshStale(options: LoadOptions?, fetch: @escaping @Sendable () async throws -> Value) {
    guard !isFetching else { return }
    ownsFetch = false
    self.fetch({ try await fetch() }, options: options, priority: nil)
  }

  /// The callers waiting for the fetch in flight (made for the first of them).
  func callerFetch() -> CallerFetch<Value> {
    if let callers { return callers }
    let made = CallerFetch<Value>()
    callers = made
    return made
  }

  /// The last caller waiting for `fetch`'s outcome was cancelled: the fetch is cancelled when no bound state waits
  /// for it either, and the entry stays as it was.
  func callerLeft(_ fetch: CallerFetch<Value>) {
    guard let current = callers, current.isSame(fetch), !fetch.hasWaiters else { return }
    callers = nil
    cancelFetchIfUnwaited()
    noteIfIdle()
  }

  /// The fetch's block ended with nothing to write (it threw `CancellationError` or `CancelLoadable` without being
  /// cancelled): `value(for:)` callers have no value to get, and end as cancelled; the entry keeps what it holds.
  @usableFromInline
  func loadEndedWithoutOutcome() {
    guard callers != nil else { return }
    endCallers(.failure(CancellationError()))
    noteIfIdle()
  }

  /// Ends the callers with the fetch's outcome.
  @usableFromInline
  func endCallers(_ outcome: Result<Value, any Error>) {
    guard let callers else { return }
    self.callers = nil
    callers.finish(outcome)
  }
}

extension CacheEntry {
  /// The entry leaves its cache while callers wait for its fetch: the fetch is forgotten (it never writes here) but not
  /// cancelled when the callers started it — its own answer ends them; a state's fetch is cancelled, and they end with
  /// `CancellationError`.
  @usableFromInline
  func detachCallers() {
    guard let callers else { return }
    self.callers = nil
    if ownsFetch {
      callers.detach()
      endLoad()
    } else {
      cancelLoad()
      callers.finish(.failure(CancellationError()))
    }
  }
}

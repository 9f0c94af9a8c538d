extension CacheStore {
  /// ``LoadCache/value(for:options:fetch:)``, on the main actor, where the entries are.
  @usableFromInline @MainActor
  func value<V>(
    for key: CacheKey<V>, options: LoadOptions?, fetch: @escaping @Sendable () async throws -> V
  ) async throws -> V {
    try Task.checkCancellation()
    if key.persistence != nil, needsRestore(key) {
      await restore(key)
      try Task.checkCancellation()
    }
    let entry = makeEntry(for: key)
    startPublishing(entry)
    let staleTime = Freshness.staleTime(given: options, declared: nil, cache: self.staleTime)
    if let value = entry.value {
      if entry.isFresh(staleTime: staleTime) { return value }
      // Stale: the value now, and the entry refreshed in the background (a refresh in flight is joined).
      if !entry.isFetching {
        entry.ownsFetch = false
        entry.fetch({ try await fetch() }, options: options, priority: nil)
      }
      return value
    }
    // A miss: the fetch in flight is joined, else one starts; the caller ends once the entry holds its outcome.
    let callers = entry.callerFetch()
    let caller = callers.join()
    if !entry.isFetching {
      entry.fetch(
        {
          do {
            let answer = try await fetch()
            callers.answer(.success(answer))
            return answer
          } catch {
            callers.answer(.failure(error))
            throw error
          }
        }, options: options, priority: nil)
      entry.ownsFetch = true
    }
    // Holds the entry strongly (a weak reference would give it a side table, kept by a task still queued at exit).
    return try await callers.wait(caller) { [entry] in
      Task { @MainActor in entry.callerLeft(callers) }
    }
  }
}

extension CacheEntry {
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
    guard callers === fetch, !fetch.hasWaiters else { return }
    callers = nil
    if isFetching, bindings.isEmpty { cancelLoad() }
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

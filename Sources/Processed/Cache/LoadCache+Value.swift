extension LoadCache {
  /// The value of `key`, fetched once however many callers ask at the same time: for services, servers and tools that
  /// want a value, not a state. Callable from any isolation.
  ///
  /// - **Fresh** (written less than `staleTime` ago, not invalidated): returns the value; nothing runs.
  /// - **Stale**: returns the value and refreshes the entry in the background (a refresh in flight is joined).
  /// - **Miss**: starts the entry's fetch, or joins the one in flight — started by another caller or by a screen — and
  ///   returns its value or throws its error. An error is not kept as a value: the next call fetches again.
  ///
  /// ```swift
  /// func user(_ id: Int) async throws -> User {
  ///   try await cache.value(for: .user(id)) { try await database.user(id) }
  /// }
  /// ```
  ///
  /// Cancelling one caller ends that caller at once with `CancellationError`; the fetch is cancelled only when no
  /// caller and no bound state waits for it any more. Latest wins at the entry as for every fetch: a caller whose fetch
  /// is overtaken returns what overtook it — the value of a ``set(_:for:)``, the answer of the fetch an
  /// ``invalidate(_:)`` restarted (waiting callers count as bound for it); after ``remove(_:)`` or ``removeAll()``,
  /// its own fetch's answer, which is not stored. The fetch runs with the options of the call that started it.
  ///
  /// > Note: The cache's entries live on the main actor. Once this method or an actor-owned state has read the cache, a
  /// > hit of any of its keys returns without leaving the caller's thread (a stale hit's refresh is queued for the main
  /// > actor), and so does a miss of a key that has no entry: its callers start or join one fetch where they run, and
  /// > its value is kept until the main actor needs the key or `gcTime` has passed (with a `gcTime` of zero it is not
  /// > kept: the cache then only shares one fetch among concurrent callers) — unless a write made off the main
  /// > actor (`set`, `invalidate`, `remove`, …) still waits to run there: then the call goes there, after the write. A
  /// > miss of a key with an entry (a state's fetch in flight, say), one with retry, a timeout, debounce, a limiter or
  /// > waiting for the network, or of a persisted key hops to the main actor too. The fetch itself runs where `fetch`
  /// > runs.
  ///
  /// - Parameters:
  ///   - key: The entry's key.
  ///   - options: The fetch's options (retry, timeout, limiter, clock) and `staleTime`; `nil`: `.default`.
  ///   - fetch: Fetches the value, or throws.
  /// - Returns: The entry's value.
  @inlinable
  public func value<V>(
    for key: CacheKey<V>, options: LoadOptions? = nil, fetch: @escaping @Sendable () async throws -> V
  ) async throws -> V {
    try Task.checkCancellation()
    let lookup = store.lookUp(key, options: options, fetch: fetch)
    // A hit of a published entry, without a hop (see `CacheStore+Published.swift`); a stale one queues its refresh.
    if case .hit(let value, let writtenAt, let invalidated) = lookup {
      let fresh = Freshness.isFresh(
        writtenAt: writtenAt, invalidated: invalidated,
        staleTime: Freshness.staleTime(given: options, declared: nil, cache: staleTime), now: store.clock.now())
      if !fresh { store.refreshInBackground(key, options: options, fetch: fetch) }
      return value
    }
    // A miss: decided where the caller runs, or the main actor's (see `CacheStore+OffMainFetches.swift`).
    return try await store.valueAfterMiss(lookup, for: key, options: options, fetch: fetch)
  }
}

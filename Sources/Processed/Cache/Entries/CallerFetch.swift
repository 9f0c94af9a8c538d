/// The callers of `LoadCache.value(for:options:fetch:)` waiting for one entry's fetch, and the outcome they end with.
///
/// Thread-safe: a caller's cancellation handler (any thread) ends that caller at once; the entry (main actor) ends the
/// others with the outcome it holds — or, when the entry left its cache meanwhile, with the fetch's own answer.
@usableFromInline
final class CallerFetch<Value: Sendable>: Sendable {
  @usableFromInline
  struct State {
    /// Every caller that joined and has not ended, with its continuation once it is parked (`nil` until then: a caller
    /// counts as waiting from the moment it joins, on the main actor, not from when its task parks).
    @usableFromInline var waiters: [UInt64: CheckedContinuation<Value, any Error>?] = [:]
    @usableFromInline var lastID: UInt64 = 0
    /// Set once the callers were ended; later callers get it at once.
    @usableFromInline var outcome: Result<Value, any Error>?
    /// Set when the entry left its cache: the fetch's own answer ends the callers.
    @usableFromInline var detached = false

    @usableFromInline init() {}
  }

  @usableFromInline let state = LockedBox(State())

  @inlinable
  init() {}

  /// Whether a caller still waits.
  @usableFromInline
  var hasWaiters: Bool { waitingCount > 0 }

  /// How many callers wait.
  @usableFromInline
  var waitingCount: Int { state.withLock { $0.waiters.count } }

  /// A caller joins the fetch: from now on it counts as waiting (``hasWaiters``), also before it parks in
  /// ``wait(_:onLastCancelled:)`` — an `invalidate` between the two restarts its fetch. Where the fetch's owner decides:
  /// on the main actor for an entry's fetch, under the published table's lock for a fetch started off it.
  @inlinable
  func join() -> UInt64 {
    state.withLock { state -> UInt64 in
      state.lastID &+= 1
      state.waiters[state.lastID] = .some(nil)
      return state.lastID
    }
  }

  /// Waits for the outcome as caller `id` (``join()``); `onLastCancelled` runs (off the lock) when the caller was
  /// cancelled and was the last waiter.
  @inlinable
  func wait(_ id: UInt64, onLastCancelled: @escaping @Sendable () -> Void) async throws -> Value {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
        let settled = state.withLock { state -> Result<Value, any Error>? in
          if let outcome = state.outcome {
            state.waiters.removeValue(forKey: id)
            return outcome
          }
          // Cancelled before it parked: its handler has removed it (and told the entry when it was the last).
          guard state.waiters[id] != nil else { return .failure(CancellationError()) }
          state.waiters[id] = continuation
          return nil
        }
        if let settled { continuation.resume(with: settled) }
      }
    } onCancel: {
      let (removed, wasLast) = state.withLock { state in
        (state.waiters.removeValue(forKey: id), state.waiters.isEmpty && state.outcome == nil)
      }
      guard let removed else { return }
      removed?.resume(throwing: CancellationError())
      if wasLast { onLastCancelled() }
    }
  }

  /// `fetch` as an entry's fetch block for these callers: its answer goes to the entry, and also to the callers once
  /// their entry left its cache (``detach()``).
  func answering(_ fetch: @escaping @Sendable () async throws -> Value) -> @MainActor () async throws -> Value {
    { [self] in
      do {
        let answer = try await fetch()
        self.answer(.success(answer))
        return answer
      } catch {
        self.answer(.failure(error))
        throw error
      }
    }
  }

  /// The entry left its cache while the callers waited: the fetch's own answer (``answer(_:)``) ends them.
  func detach() {
    state.withLock { $0.detached = true }
  }

  /// The answer of a fetch started for the callers, as its block returned: it ends them only once their entry left its
  /// cache (otherwise the entry ends them when it holds the outcome).
  func answer(_ result: Result<Value, any Error>) {
    guard state.withLock({ $0.detached }) else { return }
    finish(result)
  }

  /// Ends every caller with `outcome` (the first call wins).
  @inlinable
  func finish(_ outcome: Result<Value, any Error>) {
    let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
      guard state.outcome == nil else { return [] }
      state.outcome = outcome
      defer { state.waiters = [:] }
      return state.waiters.values.compactMap { $0 }
    }
    for waiter in waiters { waiter.resume(with: outcome) }
  }
}

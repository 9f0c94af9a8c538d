/// The callers of `LoadCache.value(for:options:fetch:)` waiting for one entry's fetch, and the outcome they end with.
///
/// Thread-safe: a caller's cancellation handler (any thread) ends that caller at once; the entry (main actor) ends the
/// others with the outcome it holds — or, when the entry left its cache meanwhile, with the fetch's own answer.
@usableFromInline
final class CallerFetch<Value: Sendable>: Sendable {
  private struct State {
    var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
    var lastID: UInt64 = 0
    /// Set once the callers were ended; later callers get it at once.
    var outcome: Result<Value, any Error>?
    /// Set when the entry left its cache: the fetch's own answer ends the callers.
    var detached = false
  }

  private let state = LockedBox(State())

  /// Whether a caller still waits.
  var hasWaiters: Bool { waitingCount > 0 }

  /// How many callers wait.
  var waitingCount: Int { state.withLock { $0.waiters.count } }

  /// Waits for the outcome; `onCancel` runs (off the lock) when the caller was cancelled and was the last waiter.
  func wait(onLastCancelled: @escaping @Sendable () -> Void) async throws -> Value {
    let id = state.withLock { state -> UInt64 in
      state.lastID &+= 1
      return state.lastID
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
        let settled = state.withLock { state -> Result<Value, any Error>? in
          if let outcome = state.outcome { return outcome }
          if Task.isCancelled { return .failure(CancellationError()) }
          state.waiters[id] = continuation
          return nil
        }
        if let settled { continuation.resume(with: settled) }
      }
    } onCancel: {
      let (waiter, wasLast) = state.withLock { state in
        (state.waiters.removeValue(forKey: id), state.waiters.isEmpty && state.outcome == nil)
      }
      guard let waiter else { return }
      waiter.resume(throwing: CancellationError())
      if wasLast { onLastCancelled() }
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
  func finish(_ outcome: Result<Value, any Error>) {
    let waiters = state.withLock { state -> [CheckedContinuation<Value, any Error>] in
      guard state.outcome == nil else { return [] }
      state.outcome = outcome
      defer { state.waiters = [:] }
      return Array(state.waiters.values)
    }
    for waiter in waiters { waiter.resume(with: outcome) }
  }
}

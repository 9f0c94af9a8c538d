/// The callers of `LoadCache.value(for:options:fetch:)` waiting for one entry's fetch, and the outcome they end with.
///
/// Thread-safe: a caller's cancellation handler (any thread) ends that caller at once; the entry (main actor) ends the
/// others with the outcome it holds — or, when the entry left its cache meanwhile, with the fetch's own answer.
///
/// The state under the lock holds the outcome as `any Sendable`, not `Value`: a state of a generic layout is copied
/// and destroyed through its type's metadata, which unspecialized code (the buffer's `deinit`, merged copies) looks up
/// on every call. Each caller casts the outcome back to `Value`.
///
/// A value: its copies share the state (one allocation, the lock's buffer); ``isSame(_:)`` tells two fetches apart.
@usableFromInline
struct CallerFetch<Value: Sendable>: Sendable {
  /// A caller's continuation.
  @usableFromInline typealias Waiter = CheckedContinuation<any Sendable, any Error>

  @usableFromInline
  struct State {
    /// Every caller that joined and has not ended, with its continuation once it is parked (`nil` until then: a caller
    /// counts as waiting from the moment it joins, on the main actor, not from when its task parks). Most fetches have
    /// one caller: it is kept inline (``firstID`` `0` when there is none), the others in a table that stays
    /// unallocated until a second caller joins.
    @usableFromInline var firstID: UInt64 = 0
    @usableFromInline var first: Waiter?
    @usableFromInline var others: [UInt64: Waiter?] = [:]
    @usableFromInline var lastID: UInt64 = 0
    /// Set once the callers were ended; later callers get it at once.
    @usableFromInline var outcome: Result<any Sendable, any Error>?
    /// Set when the entry left its cache: the fetch's own answer ends the callers.
    @usableFromInline var detached = false

    @inlinable init() {}

    @inlinable
    var waitingCount: Int { (firstID == 0 ? 0 : 1) + others.count }

    /// Caller `id` joins (``CallerFetch/join()``).
    @inlinable
    mutating func join() -> UInt64 {
      lastID &+= 1
      if firstID == 0, others.isEmpty { firstID = lastID } else { others[lastID] = .some(nil) }
      return lastID
    }

    /// Whether caller `id` still waits (has joined and not ended).
    @inlinable
    func isWaiting(_ id: UInt64) -> Bool { firstID == id || others[id] != nil }

    /// Parks caller `id`, which waits, on `continuation`.
    @inlinable
    mutating func park(_ id: UInt64, _ continuation: Waiter) {
      if firstID == id { first = continuation } else { others[id] = continuation }
    }

    /// Removes caller `id`: `nil` when it was not waiting, else its continuation if it was parked.
    @inlinable
    mutating func remove(_ id: UInt64) -> Waiter?? {
      guard firstID != id else {
        defer {
          firstID = 0
          first = nil
        }
        return .some(first)
      }
      return others.removeValue(forKey: id)
    }

    /// Every parked caller's continuation; no caller waits any more.
    @inlinable
    mutating func removeAll() -> [Waiter] {
      var parked: [Waiter] = []
      if let first { parked.append(first) }
      firstID = 0
      first = nil
      if !others.isEmpty {
        parked.append(contentsOf: others.values.compactMap { $0 })
        others = [:]
      }
      return parked
    }
  }

  @usableFromInline let state: LockedBox<State>

  @inlinable
  init() { state = LockedBox(State()) }

  /// Whether `other` is a copy of this fetch.
  func isSame(_ other: CallerFetch<Value>) -> Bool { state.buffer === other.state.buffer }

  /// Whether a caller still waits.
  @usableFromInline
  var hasWaiters: Bool { waitingCount > 0 }

  /// How many callers wait.
  @usableFromInline
  var waitingCount: Int { state.withLock { $0.waitingCount } }

  /// A caller joins the fetch: from now on it counts as waiting (``hasWaiters``), also before it parks in
  /// ``wait(_:onLastCancelled:)`` — an `invalidate` between the two restarts its fetch. Where the fetch's owner decides:
  /// on the main actor for an entry's fetch, under the published table's lock for a fetch started off it.
  @inlinable
  func join() -> UInt64 {
    state.withLock { $0.join() }
  }

  /// Waits for the outcome as caller `id` (``join()``); `onLastCancelled` runs (off the lock) when the caller was
  /// cancelled and was the last waiter.
  @inlinable
  func wait(_ id: UInt64, onLastCancelled: @escaping @Sendable () -> Void) async throws -> Value {
    // A fetch that ended before its caller got here (it answered without suspending) needs no parking.
    let ended = state.withLock { state -> Result<any Sendable, any Error>? in
      guard let outcome = state.outcome else { return nil }
      _ = state.remove(id)
      return outcome
    }
    if let ended { return try Self.value(ended) }
    let outcome = try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: Waiter) in
        let settled = state.withLock { state -> Result<any Sendable, any Error>? in
          if let outcome = state.outcome {
            _ = state.remove(id)
            return outcome
          }
          // Cancelled before it parked: its handler has removed it (and told the entry when it was the last).
          guard state.isWaiting(id) else { return .failure(CancellationError()) }
          state.park(id, continuation)
          return nil
        }
        if let settled { continuation.resume(with: settled) }
      }
    } onCancel: {
      let (removed, wasLast) = state.withLock { state in
        (state.remove(id), state.waitingCount == 0 && state.outcome == nil)
      }
      guard let removed else { return }
      removed?.resume(throwing: CancellationError())
      if wasLast { onLastCancelled() }
    }
    // Every outcome's value was a `Value` (``finish(_:)``).
    return outcome as! Value
  }

  /// The value of an outcome that ``finish(_:)`` stored, or its error.
  @inlinable
  static func value(_ outcome: Result<any Sendable, any Error>) throws -> Value {
    try outcome.get() as! Value
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
    let erased = outcome.map { $0 as any Sendable }
    let waiters = state.withLock { state -> [Waiter] in
      guard state.outcome == nil else { return [] }
      state.outcome = erased
      return state.removeAll()
    }
    for waiter in waiters { waiter.resume(with: erased) }
  }
}

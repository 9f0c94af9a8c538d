/// A `value(for:options:fetch:)` miss decided off the main actor, for a key with no entry there
/// (`CacheStore+OffMainFetches.swift`): its fetch in flight (``OffMainFetch``) or the fetch's outcome on its way to the
/// main actor (``OffMainOutcome``). It stays in ``PublishedTable/offMain`` until the main actor makes the key's entry
/// from it.
@usableFromInline
protocol OffMainWork: AnyObject, Sendable {
  /// Makes the key's entry from the work, on the main actor, once the work has left the table.
  @MainActor func settle(in store: CacheStore)
}

/// A fetch that a `value(for:options:fetch:)` miss started off the main actor, and the callers waiting for it. Its task
/// ends the callers itself, unless the main actor adopted the fetch first: then an entry runs it as its own fetch, and
/// the task hands its outcome to that entry.
///
/// `@unchecked Sendable`: the `var`s are read and written only under the lock of the store's `published` table, which
/// holds the fetch (Unsafe/README.md, invariant 12).
@usableFromInline
final class OffMainFetch<Value: Sendable>: OffMainWork, @unchecked Sendable {
  @usableFromInline let key: CacheKey<Value>
  @usableFromInline let callers: CallerFetch<Value>
  /// The caller's block: what the key's entry fetches again once it has one (`invalidate`).
  @usableFromInline let fetch: @Sendable () async throws -> Value
  /// The task, once made: it is made after the fetch joined the table, outside the lock, so that a task that starts
  /// running at once does not run under it.
  @usableFromInline var task: Task<Value, any Error>?
  /// A cancellation asked for before ``task`` was set.
  @usableFromInline var isCancelled = false
  /// After the main actor adopted the fetch: its outcome once it ended, and the adopting entry's fetch waiting for it.
  @usableFromInline var adoptedOutcome: Result<Value, any Error>?
  @usableFromInline var adopter: CheckedContinuation<Result<Value, any Error>, Never>?

  @usableFromInline
  init(key: CacheKey<Value>, callers: CallerFetch<Value>, fetch: @escaping @Sendable () async throws -> Value) {
    self.key = key
    self.callers = callers
    self.fetch = fetch
  }

  /// The main actor needs the key: an entry is made that runs this fetch as its own, with its callers.
  @usableFromInline
  func settle(in store: CacheStore) {
    let entry = CacheEntry<Value>(key: store.erased(key), store: store)
    store.insert(entry)
    entry.adopt(self)
  }
}

/// The outcome of an ``OffMainFetch`` that ended before the main actor needed its key: it becomes the key's entry —
/// holding the value or, as a fetch of an entry does, the error — the next time the main actor runs.
@usableFromInline
final class OffMainOutcome<Value: Sendable>: OffMainWork {
  @usableFromInline let key: CacheKey<Value>
  @usableFromInline let outcome: Result<Value, any Error>
  /// When the fetch ended, on the cache's clock: the value's write time.
  @usableFromInline let writtenAt: Duration
  @usableFromInline let fetch: @Sendable () async throws -> Value

  @usableFromInline
  init(
    key: CacheKey<Value>, outcome: Result<Value, any Error>, writtenAt: Duration,
    fetch: @escaping @Sendable () async throws -> Value
  ) {
    self.key = key
    self.outcome = outcome
    self.writtenAt = writtenAt
    self.fetch = fetch
  }

  @usableFromInline
  func settle(in store: CacheStore) {
    let entry = CacheEntry<Value>(key: store.erased(key), store: store)
    entry.holdFetched(outcome, writtenAt: writtenAt, block: fetch)
    store.insert(entry)
    entry.noteIfIdle(written: true)
  }
}

extension CacheEntry {
  /// A new entry runs `offMain`'s fetch in flight as its own, for its callers (who now wait here).
  func adopt(_ offMain: OffMainFetch<Value>) {
    let callers = offMain.callers
    let store = self.store
    self.callers = callers
    fetch(callers.answering { try await store.adoptedOutcome(of: offMain) }, options: nil, priority: nil)
    // What `invalidate` runs: the caller's block, as for a fetch started here.
    block = callers.answering(offMain.fetch)
    ownsFetch = true
  }

  /// A new entry holds what a fetch ended off the main actor with, as if it had fetched it: the value, written at
  /// `writtenAt`, or the error.
  func holdFetched(
    _ outcome: Result<Value, any Error>, writtenAt: Duration, block: @escaping @Sendable () async throws -> Value
  ) {
    switch outcome {
    case .success(let fetched):
      value = fetched
      self.writtenAt = writtenAt
    case .failure(let error):
      madeRecipe.lastError = error
    }
    self.block = { try await block() }
    hasFetched = true
  }
}

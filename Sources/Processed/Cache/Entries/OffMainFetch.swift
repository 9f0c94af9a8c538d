/// A `value(for:options:fetch:)` miss decided off the main actor, for a key with no entry there
/// (`CacheStore+OffMainFetches.swift`): its fetch, in flight or ended (``OffMainFetch``). It stays in
/// ``PublishedTable/offMain`` until the main actor makes the key's entry from it, or its outcome expires.
@usableFromInline
protocol OffMainWork: AnyObject, Sendable {
  /// Makes the key's entry from the work, on the main actor, once the work has left the table.
  @MainActor func settle(in store: CacheStore)
  /// `0` while the fetch runs; once it ended and left its outcome, the number its ``PublishedTable/expiring`` item
  /// carries (read under the table's lock).
  var endedStamp: UInt64 { get }
  /// When the fetch ended and left its outcome; `nil` while it runs (read under the table's lock).
  var endedAt: Duration? { get }
}

/// A fetch that a `value(for:options:fetch:)` miss started off the main actor, and the callers waiting for it. Its task
/// ends the callers itself and leaves its outcome here (``endedValue``, ``endedError``) for the key's entry, unless the main actor adopted
/// the fetch first: then an entry runs it as its own fetch, and the task hands its outcome to that entry.
///
/// `@unchecked Sendable`: the `var`s are read and written only under the lock of the store's `published` table, which
/// holds the fetch — but the outcome (``endedValue``, ``endedError``, ``endedAt``), written under it while the fetch is in the table and read by ``settle(in:)`` once
/// the main actor has taken the fetch out of the table under that lock, after which it is never written
/// (Unsafe/README.md, invariant 12).
@usableFromInline
final class OffMainFetch<Value: Sendable>: OffMainWork, @unchecked Sendable {
  @usableFromInline let key: CacheKey<Value>
  @usableFromInline let callers: CallerFetch<Value>
  /// The caller's block: what the key's entry fetches again once it has one (`invalidate`).
  @usableFromInline let fetch: @Sendable () async throws -> Value
  /// The task, once made: it is made after the fetch joined the table, outside the lock, so that a task that starts
  /// running at once does not run under it.
  @usableFromInline var task: Task<Void, Never>?
  /// A cancellation asked for before ``task`` was set.
  @usableFromInline var isCancelled = false
  /// Once the fetch ended before the main actor needed the key: its value as published (`nil` after an error), and
  /// when it ended (the value's write time).
  @usableFromInline var endedValue: PublishedValueOf<Value>?
  @usableFromInline var endedError: (any Error)?
  @usableFromInline var endedAt: Duration?
  /// See ``OffMainWork/endedStamp``: unique per table, so that an expiry item never matches a later fetch.
  @usableFromInline var endedStamp: UInt64 = 0
  /// After the main actor adopted the fetch: its outcome once it ended, and the adopting entry's fetch waiting for it.
  /// Erased, like ``CallerFetch``'s state, so that the record's fields have one layout whatever `Value` is.
  @usableFromInline var adoptedOutcome: Result<any Sendable, any Error>?
  @usableFromInline var adopter: CheckedContinuation<Result<any Sendable, any Error>, Never>?

  @inlinable
  init(key: CacheKey<Value>, callers: CallerFetch<Value>, fetch: @escaping @Sendable () async throws -> Value) {
    self.key = key
    self.callers = callers
    self.fetch = fetch
  }

  /// The main actor needs the key: an entry is made that holds the fetch's outcome as if it had fetched it, or that
  /// runs the fetch in flight as its own, with its callers.
  @usableFromInline
  func settle(in store: CacheStore) {
    let entry = CacheEntry<Value>(key: store.erased(key), store: store)
    if let endedAt {
      let outcome: Result<Value, any Error> =
        if let endedValue { .success(endedValue.value) } else { .failure(endedError ?? CancellationError()) }
      entry.holdFetched(outcome, writtenAt: endedAt, block: fetch)
      store.insert(entry)
      entry.noteIfIdle(written: true)
    } else {
      store.insert(entry)
      entry.adopt(self)
    }
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

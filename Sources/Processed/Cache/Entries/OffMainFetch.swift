/// A `value(for:options:fetch:)` miss decided off the main actor, for a key with no entry there
/// (`CacheStore+OffMainFetches.swift`): its fetch, in flight or ended (``OffMainFetch``). It stays in
/// ``PublishedTable/offMain`` until the main actor makes the key's entry from it, or its outcome expires.
@usableFromInline
protocol OffMainWork: AnyObject, Sendable {
  /// Makes the key's entry from the work, on the main actor, once the work has left the table.
  @MainActor func settle(in store: CacheStore)
  /// The key's new `entry`, just inserted, takes over the work, which has left the table (``CacheStore/insert(_:)``).
  @MainActor func absorb(into entry: AnyCacheEntry, store: CacheStore)
  /// `0` while the fetch runs; once it ended and left its outcome, the number its ``PublishedTable/expiring`` item
  /// carries (read under the table's lock).
  var endedStamp: UInt64 { get }
  /// When the fetch ended and left its outcome; `nil` while it runs (read under the table's lock).
  var endedAt: Duration? { get }
  /// The main actor took the work out of the table to make its key's entry (called under the table's lock): a fetch in
  /// flight makes its callers, and joins the starter to them if it has not taken its part yet.
  func willBeAdopted()
}

/// A fetch that a `value(for:options:fetch:)` miss started off the main actor, and the callers waiting for it. Its task
/// ends the callers itself and leaves its outcome here (``endedValue``, ``endedError``) for the key's entry, unless the
/// main actor adopted the fetch first: then an entry runs it as its own fetch, and the task hands its outcome to that
/// entry.
///
/// The caller that started the fetch is not one of ``callers`` at first (``starterWaits``): most fetches have that one
/// caller, and one that answers without suspending ends before its caller needs to park, so it takes the outcome here
/// (``outcome``) and no callers are made. It joins them only when it has to wait, or when the main actor adopts the
/// fetch first (``willBeAdopted()``).
///
/// `@unchecked Sendable`: the `var`s are read and written only under the lock of the store's `published` table, which
/// holds the fetch — but the outcome (``endedValue``, ``endedError``, ``endedAt``) and ``callers`` of a fetch the main
/// actor took out of the table under that lock: written before, never after, and read by ``settle(in:)`` and the
/// adopting entry (Unsafe/README.md, invariant 12).
@usableFromInline
final class OffMainFetch<Value: Sendable>: OffMainWork, @unchecked Sendable {
  @usableFromInline let key: CacheKey<Value>
  /// The key as the published table holds it (its value type and parts), made once for the miss.
  @usableFromInline let published: PublishedKey
  /// The callers who wait for the fetch, made for the first of them (``madeCallers``).
  @usableFromInline @exclusivity(unchecked) var callers: CallerFetch<Value>?
  /// The caller that started the fetch has neither joined ``callers`` nor taken the outcome yet: it counts as waiting.
  @usableFromInline @exclusivity(unchecked) var starterWaits = true
  /// The starter's caller number in ``callers`` when the main actor joined it there (``willBeAdopted()``); `0` if not.
  @usableFromInline @exclusivity(unchecked) var starterID: UInt64 = 0
  /// The caller's block: what the key's entry fetches again once it has one (`invalidate`).
  @usableFromInline let fetch: @Sendable () async throws -> Value
  /// The task, once made: it is made after the fetch joined the table, outside the lock, so that a task that starts
  /// running at once does not run under it.
  @usableFromInline @exclusivity(unchecked) var task: Task<Void, Never>?
  /// A cancellation asked for before ``task`` was set.
  @usableFromInline @exclusivity(unchecked) var isCancelled = false
  /// The fetch ended and the main actor had not adopted it: its callers were ended with ``outcome``.
  @usableFromInline @exclusivity(unchecked) var isEnded = false
  /// Once the fetch ended before the main actor needed the key: its value as published (`nil` after an error), and
  /// when it ended (the value's write time).
  @usableFromInline @exclusivity(unchecked) var endedValue: PublishedValueOf<Value>?
  @usableFromInline @exclusivity(unchecked) var endedError: (any Error)?
  @usableFromInline @exclusivity(unchecked) var endedAt: Duration?
  /// See ``OffMainWork/endedStamp``: unique per table, so that an expiry item never matches a later fetch.
  @usableFromInline @exclusivity(unchecked) var endedStamp: UInt64 = 0
  /// After the main actor adopted the fetch: its outcome once it ended, and the adopting entry's fetch waiting for it.
  /// Erased, like ``CallerFetch``'s state, so that the record's fields have one layout whatever `Value` is.
  @usableFromInline @exclusivity(unchecked) var adoptedOutcome: Result<any Sendable, any Error>?
  @usableFromInline @exclusivity(unchecked) var adopter: CheckedContinuation<Result<any Sendable, any Error>, Never>?
  /// The answer of a fetch whose outcome was not kept (a `gcTime` of zero), for the caller that started it. Typed (an
  /// erased one cost a box and a cast per miss), and last, so that the fields before it have one layout whatever
  /// `Value` is.
  @usableFromInline @exclusivity(unchecked) var droppedValue: Value?

  @inlinable
  init(key: CacheKey<Value>, published: PublishedKey, fetch: @escaping @Sendable () async throws -> Value) {
    self.key = key
    self.published = published
    self.fetch = fetch
  }

  /// ``callers``, made if none were (under the table's lock).
  @inlinable
  var madeCallers: CallerFetch<Value> {
    if let callers { return callers }
    let made = CallerFetch<Value>()
    callers = made
    return made
  }

  /// How many callers wait, the starter included while ``starterWaits`` (for tests; takes the table's lock).
  func waitingCount(in store: CacheStore) -> Int {
    store.published.withLock { _ in (starterWaits ? 1 : 0) + (callers?.waitingCount ?? 0) }
  }

  @usableFromInline
  func willBeAdopted() {
    guard endedAt == nil else { return }
    let callers = madeCallers
    if starterWaits {
      starterID = callers.join()
      starterWaits = false
    }
  }

  /// The main actor needs the key: an entry is made that holds the fetch's outcome as if it had fetched it, or that
  /// runs the fetch in flight as its own, with its callers.
  @usableFromInline
  func settle(in store: CacheStore) {
    let entry = CacheEntry<Value>(key: store.erased(key), store: store)
    if let endedAt {
      entry.holdFetched(outcome(), writtenAt: endedAt, block: fetch)
      store.insert(entry)
      entry.noteIfIdle(written: true)
    } else {
      store.insert(entry)
      entry.adopt(self)
    }
  }

  @usableFromInline
  func absorb(into entry: AnyCacheEntry, store: CacheStore) {
    // The key's value type is part of the table's key.
    guard let entry = entry as? CacheEntry<Value> else { preconditionFailure("an entry of another value type") }
    if let endedAt {
      entry.holdFetched(outcome(), writtenAt: endedAt, block: fetch)
      entry.noteIfIdle(written: true)
    } else {
      entry.adopt(self)
    }
  }

  /// What a fetch that ended left (``endedAt`` set), or what its callers ended with once ``isEnded``: the value, the
  /// error kept, or `CancellationError` for a block that threw a control error (under the table's lock, or once the
  /// fetch left the table).
  @inlinable
  func outcome() -> Result<Value, any Error> {
    if let endedValue { return .success(endedValue.value) }
    if let droppedValue { return .success(droppedValue) }
    return .failure(endedError ?? CancellationError())
  }
}

extension CacheEntry {
  /// A new entry runs `offMain`'s fetch in flight as its own, for its callers (who now wait here).
  func adopt(_ offMain: OffMainFetch<Value>) {
    // Made when the main actor took the fetch out of the table (`willBeAdopted()`).
    let callers = offMain.madeCallers
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

/// What one look at the published table found for a `value(for:options:fetch:)` call, under one lock
/// (``CacheStore/lookUp(_:options:fetch:)``): a value, a fetch off the main actor it started or joined, or the main
/// actor's part to decide.
@usableFromInline
enum PublishedLookup<V: Sendable> {
  /// The key's published value, written at `writtenAt` on the cache's clock (the caller judges its freshness).
  case hit(V, writtenAt: Duration, invalidated: Bool)
  /// The call started the key's fetch off the main actor (``OffMainFetch``; its task is not made yet).
  case started(OffMainFetch<V>)
  /// The call joined the key's fetch in flight off the main actor, as caller `caller` of its callers.
  case joined(OffMainFetch<V>, CallerFetch<V>, caller: UInt64)
  /// The main actor decides: the key has an entry without a value, a queued call may change it, the table is not
  /// complete, or the call needs an entry (see ``CacheStore/lookUp(_:options:fetch:)``).
  case main
}

/// The cache's one rule for fresh versus stale, and for which stale time a call uses. Read by an entry
/// (``CacheEntry/isFresh(staleTime:)``), a wrapper's fresh hit (`CachedLoad.freshHit`) and a published row read from
/// any thread (`CacheStore+Published.swift`). See Documentation/Cache.md, "Fresh or stale".
@usableFromInline
enum Freshness {
  /// Whether a value written at `writtenAt` (on the cache's clock) is fresh at `now`: it was not invalidated and less
  /// than `staleTime` has passed.
  @inlinable
  static func isFresh(writtenAt: Duration, invalidated: Bool, staleTime: Duration, now: Duration) -> Bool {
    !invalidated && now - writtenAt < staleTime
  }

  /// The stale time of a call: its own options' when it was given options, else its declaration's, else the cache's.
  /// A `value(for:)` caller has no declaration.
  @inlinable
  static func staleTime(given: LoadOptions?, declared: LoadOptions.Resolved?, cache: Duration) -> Duration {
    (given != nil ? given?.staleTime : declared?.options.staleTime) ?? cache
  }
}

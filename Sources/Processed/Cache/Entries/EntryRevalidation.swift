/// What an entry keeps for revalidation and polling (see Documentation/Cache.md, "Revalidation"): made on first need
/// — an entry that is never revalidated and never polled carries `nil`.
@usableFromInline @MainActor
final class EntryRevalidation {
  /// When the last focus or network refetch ran (or joined a fetch in flight), on the cache's clock: the throttle's
  /// window opens there.
  var lastRevalidation: Duration?
  /// When the entry's last fetch ended, on the cache's clock: polls count from there.
  var lastFetchEnd: Duration?
  /// The poll timer while one is set, and the deadline it sleeps until.
  var pollTimer: Task<Void, Never>?
  var pollDeadline: Duration?

  @usableFromInline
  func stopPolling() {
    pollTimer?.cancel()
    pollTimer = nil
    pollDeadline = nil
  }
}

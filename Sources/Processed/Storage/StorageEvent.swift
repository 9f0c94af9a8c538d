/// What happened between a ``LoadCache`` and its ``CacheStorage``, in ``LoadCache/storageEvents``.
///
/// Storage never fails a load; what went wrong is reported here.
///
/// ```swift
/// Task {
///   for await event in cache.storageEvents {
///     if case .dropped(let name, let error) = event { log.warning("dropped \(name): \(error)") }
///   }
/// }
/// ```
public enum StorageEvent: Sendable {
  /// The record under this name was read and shown (a stale value, refetched at once).
  case restored(String)
  /// The record under this name could not be read or decoded: it was removed, and the load went on as a miss.
  case dropped(String, any Error)
  /// Writing or removing the record under this name failed.
  case writeFailed(String, any Error)
}

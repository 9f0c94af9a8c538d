/// Where a ``LoadCache`` keeps the values of its persisted keys (``CacheKey/persisted()``) between launches: one record
/// per name, read lazily and written per key.
///
/// The cache calls these methods off the main actor. A method that throws never fails a load: a failed or undecodable
/// `read` is reported as ``StorageEvent/dropped(_:_:)`` (and the record removed), a failed `write` or `remove` as
/// ``StorageEvent/writeFailed(_:_:)``. `FileCacheStorage` (product `ProcessedStorage`) keeps one JSON file per record;
/// a test can keep records in a dictionary:
///
/// ```swift
/// actor MemoryStorage: CacheStorage {
///   var records: [String: any Sendable] = [:]
///   func read<V: Codable & Sendable>(_ type: V.Type, at name: String) async throws -> V? { records[name] as? V }
///   func write<V: Codable & Sendable>(_ value: V, at name: String) async throws { records[name] = value }
///   func remove(at name: String) async throws { records[name] = nil }
///   func removeAll() async throws { records = [:] }
/// }
///
/// let cache = LoadCache(storage: MemoryStorage())
/// ```
///
/// See <doc:PersistingTheCache>.
public protocol CacheStorage: Sendable {
  /// The record stored under `name`, decoded as `type`; `nil` when there is none (or it is too old, or of another
  /// version: the storage decides). Throws when the record cannot be read or decoded.
  func read<V: Codable & Sendable>(_ type: V.Type, at name: String) async throws -> V?
  /// Stores `value` under `name`, replacing the record there.
  func write<V: Codable & Sendable>(_ value: V, at name: String) async throws
  /// Removes the record under `name`, if any.
  func remove(at name: String) async throws
  /// Removes every record.
  func removeAll() async throws
}

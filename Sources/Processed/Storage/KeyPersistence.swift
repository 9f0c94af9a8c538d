/// How a persisted ``CacheKey`` reads and writes its value in a ``CacheStorage``: its record's name, and the storage's
/// generic methods bound to the key's `Codable` value type (the cache's entries know their value type only as
/// `Sendable`).
@usableFromInline
final class KeyPersistence<Value: Sendable>: Sendable {
  /// The record's name (``CacheKey/storageName``).
  let name: String
  /// Reads the record, decoded as `Value`.
  let read: @Sendable (any CacheStorage) async throws -> Value?
  /// Writes `value` as the record.
  let write: @Sendable (any CacheStorage, Value) async throws -> Void

  init(name: String) where Value: Codable {
    self.name = name
    read = { storage in try await storage.read(Value.self, at: name) }
    write = { storage, value in try await storage.write(value, at: name) }
  }
}

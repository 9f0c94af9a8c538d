/// Why a ``FileCacheStorage`` could not write, read or remove a record.
///
/// A record whose file is not valid JSON, or whose value does not decode as the requested type, throws the
/// `DecodingError` instead; a value that cannot be encoded throws its `EncodingError`; a directory that cannot be
/// listed (by `removeAll()` or the eviction of a write) throws Foundation's error.
///
/// ```swift
/// do {
///   try await storage.write(hugeFeed, at: "feed")
/// } catch FileCacheStorageError.recordTooLarge(let name, let bytes, let limit) {
///   log.notice("\(name) not stored: \(bytes) bytes, limit \(limit)")
/// }
/// ```
public enum FileCacheStorageError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The record for `name` would take `bytes` bytes on disk, more than the storage's whole `maxBytes` (`limit`): it
  /// was not stored, and any older record for `name` was removed.
  ///
  /// ```swift
  /// let storage = FileCacheStorage(directory: path, maxBytes: 64)
  /// // throws FileCacheStorageError.recordTooLarge(name: "feed", bytes: 1_089, limit: 64)
  /// try await storage.write(String(repeating: "x", count: 1_000), at: "feed")
  /// ```
  case recordTooLarge(name: String, bytes: Int, limit: Int)

  /// A file-system call failed: `operation` is the call (`open`, `write`, `fsync`, `rename`, `unlink`...), `path`
  /// the file it was given and `code` its `errno`.
  ///
  /// ```swift
  /// // A directory under a file, which cannot be created:
  /// let storage = FileCacheStorage(directory: "/etc/hosts/cache")
  /// // throws FileCacheStorageError.fileSystem(operation: "mkdir", path: "/etc/hosts/cache", code: ENOTDIR)
  /// try await storage.write(1, at: "count")
  /// ```
  case fileSystem(operation: String, path: String, code: Int32)

  /// A sentence describing the error.
  ///
  /// ```swift
  /// print(FileCacheStorageError.recordTooLarge(name: "feed", bytes: 1_089, limit: 64))
  /// // The record "feed" takes 1089 bytes, more than the storage's limit of 64 bytes: it was not stored.
  /// ```
  public var description: String {
    switch self {
    case .recordTooLarge(let name, let bytes, let limit):
      "The record \(String(reflecting: name)) takes \(bytes) bytes, more than the storage's limit of \(limit) bytes: "
        + "it was not stored."
    case .fileSystem(let operation, let path, let code):
      "\(operation) failed for \(String(reflecting: path)) (errno \(code))."
    }
  }
}

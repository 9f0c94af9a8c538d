import Foundation
public import Processed

/// A `CacheStorage` that keeps each record in its own JSON file in a directory, for a `LoadCache`'s persisted keys.
///
/// ```swift
/// let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask)[0]
/// let storage = FileCacheStorage(
///   directory: caches.appending(path: "LoadCache").path, version: "3", maxAge: .seconds(7 * 86_400),
///   maxBytes: 20_000_000)
/// let cache = LoadCache(storage: storage)
/// ```
///
/// Guarantees:
///
/// - **One file per name**, directly inside `directory` (created, with its parents, by the first write). Any name
///   maps to one file and two names never share one: `"/"`, `".."`, `"../x"`, `""`, `"é🙂"` or a 10,000-character
///   name stay inside the directory. A name is percent-escaped (every UTF-8 byte but `a`–`z`, `0`–`9`, `-` and `_`,
///   so upper-case letters too, which keeps `"A"` and `"a"` apart on a case-insensitive file system) and gets `.json`:
///   `"feed"` → `feed.json`, `"User/42"` → `%55ser%2F42.json`, `""` → `%.json`. An escape longer than 195 bytes is
///   cut to 150 bytes and followed by its FNV-1a 64-bit hash and its length, so that no file name passes 200 bytes;
///   since two such names could share a file, every record stores its name and a read of another name reads `nil`.
/// - **Atomic writes**: a record is written to a temporary file in the same directory (`.<UUID>.tmp`, which no name
///   maps to), flushed to the disk, then renamed over the old record (`rename(2)`): a reader, or a crash, sees the
///   old record or the new one, never a torn one. A failed write deletes its temporary file; one left by a crash is
///   never read as a record, and is deleted by ``removeAll()`` or, an hour old, by a write's eviction.
/// - **Envelope**: a record is `{"name": …, "value": …, "version": …, "written": …}`, `written` in seconds since
///   1970 (a `Double`: sub-second precision); the value is encoded with `JSONEncoder`, decoded with `JSONDecoder`.
/// - **Expiry**: ``read(_:at:)`` reads `nil` and deletes the file of a record of another `version`, or one at least
///   `maxAge` old (`maxAge: .zero` drops everything). No file reads `nil`; a file that is not a record, or whose value
///   does not decode, throws (a `LoadCache` then reports it and calls ``remove(at:)``).
/// - **Size limit**: with `maxBytes`, after each write the least recently written records are deleted until the
///   record files in the directory take at most `maxBytes` bytes (the record just written is kept). A record larger
///   than `maxBytes` on its own is not stored: the write throws
///   ``FileCacheStorageError/recordTooLarge(name:bytes:limit:)`` and **removes** the older record for that name (its
///   value was superseded; keeping it would restore an outdated value). A record file's modification date is its
///   write date, which eviction orders by.
/// - **Concurrency**: an actor; its calls run one at a time, and several storages (or processes) may share a
///   directory: each write has its own temporary file, and renames are atomic. Its file calls block the calling
///   thread for as long as they take.
/// - **Other files**: ``removeAll()`` deletes the record files (and temporary files) only, never the directory nor a
///   file whose name is not a record's (`notes.txt`, `.DS_Store`); eviction counts record files only.
public actor FileCacheStorage: CacheStorage {
  /// The directory holding the record files, as given.
  ///
  /// ```swift
  /// FileCacheStorage(directory: "/tmp/cache").directory  // "/tmp/cache"
  /// ```
  public nonisolated let directory: String
  /// The version written into each record: a record of another version reads as `nil` (and is deleted). Change it
  /// when the stored types change shape.
  ///
  /// ```swift
  /// FileCacheStorage(directory: path, version: "2").version  // "2"
  /// ```
  public nonisolated let version: String
  /// How old a record may get: one at least this old reads as `nil` (and is deleted).
  ///
  /// ```swift
  /// FileCacheStorage(directory: path).maxAge  // .seconds(86_400): a day
  /// ```
  public nonisolated let maxAge: Duration
  /// The most bytes the record files may take together, or `nil` for no limit.
  ///
  /// ```swift
  /// FileCacheStorage(directory: path, maxBytes: 1_000_000).maxBytes  // 1_000_000
  /// ```
  public nonisolated let maxBytes: Int?

  /// How old a temporary file left by a crash must be for a write's eviction to delete it (a younger one may be
  /// another storage's write under way).
  static let temporaryLifetime: Double = 3_600

  /// `directory` without trailing slashes (`.` when empty): the start of every file's path.
  private let root: String
  /// The current date: when a record is written, and how old it is when read.
  private let now: @Sendable () -> Date
  /// Runs after a write's temporary file is complete, before it is renamed over the record (tests simulate a failed
  /// or interrupted write with it).
  private let beforeRename: @Sendable (_ temporaryPath: String) throws -> Void

  /// A storage keeping its records in `directory`.
  ///
  /// ```swift
  /// let storage = FileCacheStorage(directory: cachesPath + "/LoadCache", version: "2", maxBytes: 10_000_000)
  /// try await storage.write(["a", "b"], at: "tags")
  /// try await storage.read([String].self, at: "tags")  // ["a", "b"]
  /// ```
  ///
  /// - Parameters:
  ///   - directory: Where the record files are, created with its parents by the first write if missing. Give the
  ///     storage a directory of its own: ``removeAll()`` deletes every file in it that has a record file's name.
  ///   - version: Written into each record; a record of another version reads as `nil` and is deleted.
  ///   - maxAge: A record at least this old reads as `nil` and is deleted; `.zero` drops every record. A day by
  ///     default.
  ///   - maxBytes: The most bytes the record files may take together: a write deletes the least recently written
  ///     records beyond it, and a record larger than it is not stored. `nil` (the default) for no limit.
  public init(
    directory: String, version: String = "1", maxAge: Duration = .seconds(86_400), maxBytes: Int? = nil
  ) {
    self.init(directory: directory, version: version, maxAge: maxAge, maxBytes: maxBytes, now: { Date() })
  }

  /// A storage whose dates come from `now`, and which calls `beforeRename` before it renames a record into place.
  init(
    directory: String, version: String = "1", maxAge: Duration = .seconds(86_400), maxBytes: Int? = nil,
    now: @escaping @Sendable () -> Date,
    beforeRename: @escaping @Sendable (_ temporaryPath: String) throws -> Void = { _ in }
  ) {
    self.directory = directory
    self.version = version
    self.maxAge = maxAge
    self.maxBytes = maxBytes
    self.now = now
    self.beforeRename = beforeRename
    var root = directory
    while root.count > 1, root.hasSuffix("/") { root.removeLast() }
    self.root = root.isEmpty ? "." : root
  }

  /// The value stored under `name`, decoded as `type`; `nil` when there is no record, or it is of another version or
  /// at least `maxAge` old (its file is then deleted), or its file is shared with another (long) name.
  ///
  /// ```swift
  /// let feed = try await storage.read(Feed.self, at: "feed")  // nil, or the feed written last
  /// ```
  ///
  /// - Throws: A `DecodingError` when the file is not a record or its value does not decode as `type`;
  ///   ``FileCacheStorageError/fileSystem(operation:path:code:)`` when the file cannot be read or deleted.
  public func read<V: Codable & Sendable>(_ type: V.Type, at name: String) async throws -> V? {
    let path = path(of: RecordFileName(name).value)
    guard let bytes = try POSIXFile.read(at: path) else { return nil }
    let data = Data(bytes)
    let decoder = JSONDecoder()
    let header = try decoder.decode(RecordHeader.self, from: data)
    guard header.name == name else { return nil }
    guard header.version == version, !isExpired(written: header.written) else {
      try POSIXFile.remove(at: path)
      return nil
    }
    return try decoder.decode(RecordEnvelope<V>.self, from: data).value
  }

  /// Stores `value` under `name`, replacing its record atomically, then (with `maxBytes`) deletes the least recently
  /// written records beyond the limit.
  ///
  /// ```swift
  /// try await storage.write(Feed(items: items), at: "feed")
  /// ```
  ///
  /// - Throws: ``FileCacheStorageError/recordTooLarge(name:bytes:limit:)`` when the record alone is larger than
  ///   `maxBytes` (the older record for `name` is then removed);
  ///   ``FileCacheStorageError/fileSystem(operation:path:code:)`` when a file call fails (the old record is then
  ///   left as it was, unless eviction failed, after the new record was stored); an `EncodingError` when the value
  ///   does not encode.
  public func write<V: Codable & Sendable>(_ value: V, at name: String) async throws {
    let fileName = RecordFileName(name)
    let path = path(of: fileName.value)
    let written = now().timeIntervalSince1970
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let data = try encoder.encode(RecordEnvelope(version: version, written: written, name: name, value: value))
    if let maxBytes, data.count > maxBytes {
      try? removeRecord(named: name, fileName: fileName)
      throw FileCacheStorageError.recordTooLarge(name: name, bytes: data.count, limit: maxBytes)
    }
    try POSIXFile.createDirectory(at: root)
    let temporary = self.path(of: RecordFileName.temporary(uuid: UUID().uuidString))
    try POSIXFile.create(at: temporary, bytes: Array(data), modified: written)
    do {
      try beforeRename(temporary)
      try POSIXFile.rename(temporary, to: path)
    } catch {
      _ = try? POSIXFile.remove(at: temporary)
      throw error
    }
    if let maxBytes {
      try evict(toFit: maxBytes, keeping: fileName.value)
    }
  }

  /// Deletes the record under `name`, if any (a long name's file is kept when it holds another name's record).
  ///
  /// ```swift
  /// try await storage.remove(at: "feed")
  /// ```
  ///
  /// - Throws: ``FileCacheStorageError/fileSystem(operation:path:code:)`` when the file cannot be deleted.
  public func remove(at name: String) async throws {
    try removeRecord(named: name, fileName: RecordFileName(name))
  }

  /// Deletes every record file in the directory, and any temporary file left by an interrupted write; the directory
  /// and the files that are not records stay.
  ///
  /// ```swift
  /// try await storage.removeAll()  // e.g. when the user signs out
  /// ```
  ///
  /// - Throws: Foundation's error when the directory cannot be listed,
  ///   ``FileCacheStorageError/fileSystem(operation:path:code:)`` when a file cannot be deleted.
  public func removeAll() async throws {
    for fileName in try fileNames() where RecordFileName.isRecord(fileName) || RecordFileName.isTemporary(fileName) {
      let path = path(of: fileName)
      guard try POSIXFile.regularFileStatus(at: path) != nil else { continue }
      try POSIXFile.remove(at: path)
    }
  }

  // MARK: - Helpers

  /// The path of the file named `fileName` in the directory.
  private func path(of fileName: String) -> String {
    root == "/" ? "/" + fileName : root + "/" + fileName
  }

  /// Whether a record written at `written` (seconds since 1970) is at least `maxAge` old.
  private func isExpired(written: Double) -> Bool {
    guard maxAge > .zero else { return true }
    let components = maxAge.components
    let maxAgeSeconds = Double(components.seconds) + Double(components.attoseconds) / 1e18
    return now().timeIntervalSince1970 - written >= maxAgeSeconds
  }

  /// Deletes the file of `name`, unless it is a hashed file holding another name's record.
  private func removeRecord(named name: String, fileName: RecordFileName) throws {
    let path = path(of: fileName.value)
    if fileName.isHashed, let bytes = try POSIXFile.read(at: path),
      let header = try? JSONDecoder().decode(RecordHeader.self, from: Data(bytes)), header.name != name
    {
      return
    }
    try POSIXFile.remove(at: path)
  }

  /// The names of the files in the directory; none when it does not exist.
  private func fileNames() throws -> [String] {
    guard FileManager.default.fileExists(atPath: root) else { return [] }
    return try FileManager.default.contentsOfDirectory(atPath: root)
  }

  /// Deletes the least recently written records (by their files' modification dates, which are their write dates)
  /// until the record files take at most `maxBytes`, never the file `kept` (the record just written); deletes the
  /// temporary files older than ``temporaryLifetime`` on the way.
  private func evict(toFit maxBytes: Int, keeping kept: String) throws {
    var records: [(fileName: String, bytes: Int, modified: Double)] = []
    var total = 0
    let staleBefore = now().timeIntervalSince1970 - Self.temporaryLifetime
    for fileName in try fileNames() {
      let path = path(of: fileName)
      if RecordFileName.isRecord(fileName) {
        guard let status = try POSIXFile.regularFileStatus(at: path) else { continue }
        records.append((fileName, status.bytes, status.modified))
        total += status.bytes
      } else if RecordFileName.isTemporary(fileName), let status = try? POSIXFile.regularFileStatus(at: path),
        status.modified < staleBefore
      {
        _ = try? POSIXFile.remove(at: path)
      }
    }
    guard total > maxBytes else { return }
    records.sort { ($0.modified, $0.fileName) < ($1.modified, $1.fileName) }
    for record in records where record.fileName != kept {
      try POSIXFile.remove(at: path(of: record.fileName))
      total -= record.bytes
      if total <= maxBytes { return }
    }
  }
}

// Hand-written persistence: the baselines of the storage benchmarks (`StorageBenchmarks.swift`). `@inlinable`, like
// the rest of this target, so that they are specialized and inlined into the benchmarks as Processed's code is.
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A small post, the payload of the read rows: a feed is `[Post]`.
public struct Post: Codable, Sendable, Equatable {
  /// The post's number.
  public var id: Int
  /// Who wrote it.
  public var author: String
  /// Its title.
  public var title: String
  /// Its text.
  public var body: String
  /// How many liked it.
  public var likes: Int
  /// When it was published, in seconds since 1970.
  public var published: Double

  /// Post number `id` of a sample feed, with a short title and a sentence of body.
  @inlinable
  public init(sample id: Int) {
    self.id = id
    author = "user\(id % 7)"
    title = "Post number \(id)"
    body = "A short paragraph of text, as a feed shows under a title: post \(id) of the sample feed."
    likes = id * 3
    published = 1_795_000_000 + Double(id) * 60
  }
}

/// The record a ``FileCacheStorage`` file holds, written by hand: `{"name", "value", "version", "written"}`.
public struct HandRecordEnvelope<Value: Codable & Sendable>: Codable, Sendable {
  /// The record's name.
  public var name: String
  /// The stored value.
  public var value: Value
  /// The storage's version when it was written.
  public var version: String
  /// When it was written, in seconds since 1970.
  public var written: Double
}

/// The hand-written read of a record file: `FileManager.default.contents(atPath:)`, one `JSONDecoder` decode of the
/// envelope, and the checks a careful engineer makes (the name, the version, the age). An actor, as the storage is,
/// so that a caller on the main actor makes the same hops to read through either.
public actor HandRecordReader {
  /// The version a record must have.
  public let version: String
  /// How old a record may be, in seconds.
  public let maxAge: Double

  /// A reader of records of `version`, at most `maxAge` seconds old.
  @inlinable
  public init(version: String = "1", maxAge: Double = 86_400) {
    self.version = version
    self.maxAge = maxAge
  }

  /// The value of the record `name` in the file at `path`, or `nil` when there is none, or it is of another name or
  /// version, or too old.
  @inlinable
  public func read<V: Codable & Sendable>(_ type: V.Type, name: String, at path: String) throws -> V? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    let envelope = try JSONDecoder().decode(HandRecordEnvelope<V>.self, from: data)
    guard envelope.name == name, envelope.version == version,
      Date().timeIntervalSince1970 - envelope.written < maxAge
    else { return nil }
    return envelope.value
  }
}

/// The anchor design for persisting a cache: every change serialises the whole cache — each entry's name and `Int`
/// value in one `[String: Int]`, encoded with `JSONEncoder` into one `Data` — and writes it to one file atomically,
/// with the same steps as `FileCacheStorage` (a new temporary file in the same directory, written, `fsync`, closed,
/// then renamed over the old file).
@MainActor
public final class HandWholeCacheSnapshot {
  /// The cache's values, by their record names.
  public var values: [String: Int]
  /// The file holding the whole cache.
  public let path: String
  @usableFromInline var writes = 0

  /// A snapshot of `values`, written to `path`.
  @inlinable
  public init(values: [String: Int], path: String) {
    self.values = values
    self.path = path
  }

  /// One change: the value of `name` becomes `value`, and the whole cache is written again.
  @inlinable
  public func change(_ name: String, to value: Int) throws {
    values[name] = value
    let data = try JSONEncoder().encode(values)
    writes += 1
    let temporary = path + ".\(writes).tmp"
    let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    precondition(descriptor >= 0, "open failed: errno \(errno)")
    data.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        precondition(count > 0 || errno == EINTR, "write failed: errno \(errno)")
        if count > 0 { offset += count }
      }
    }
    precondition(fsync(descriptor) == 0, "fsync failed: errno \(errno)")
    precondition(close(descriptor) == 0, "close failed: errno \(errno)")
    precondition(rename(temporary, path) == 0, "rename failed: errno \(errno)")
  }
}

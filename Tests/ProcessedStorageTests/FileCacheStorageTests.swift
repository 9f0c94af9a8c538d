import Foundation
import Processed
import Testing

@testable import ProcessedStorage

/// `FileCacheStorage`: one atomic JSON file per name, inside its directory whatever the name, versioned, expiring,
/// size-limited, and safe to call from many tasks.
@Suite struct FileCacheStorageTests {
  struct Profile: Codable, Equatable, Sendable {
    var name: String
    var age: Int
    var tags: [String]
    var score: Double?
  }

  struct Interrupted: Error {}

  /// The path of `name`'s record file in `directory`.
  func recordPath(_ name: String, in directory: TemporaryDirectory) -> String {
    directory.cache + "/" + RecordFileName(name).value
  }

  // MARK: - Round trip, envelope

  @Test func aValueRoundTripsAcrossTwoStoragesOnTheSameDirectory() async throws {
    try await TemporaryDirectory.with { directory in
      let profile = Profile(name: "Ada", age: 36, tags: ["math", "engines"], score: 0.5)
      let writer: any CacheStorage = FileCacheStorage(directory: directory.cache)
      try await writer.write(profile, at: "profile")
      let reader: any CacheStorage = FileCacheStorage(directory: directory.cache)
      #expect(try await reader.read(Profile.self, at: "profile") == profile)
      #expect(try await reader.read(Profile.self, at: "other") == nil)
      #expect(directory.cacheEntries == ["profile.json"])
    }
  }

  @Test func aRecordIsAJSONEnvelopeWithTheVersionTheSubSecondWriteDateTheNameAndTheValue() async throws {
    try await TemporaryDirectory.with { directory in
      let clock = ManualClock(Date(timeIntervalSince1970: 1_700_000_000.25))
      let storage = FileCacheStorage(directory: directory.cache, version: "7", now: { clock.now() })
      try await storage.write(Profile(name: "Ada", age: 36, tags: [], score: nil), at: "User/42")
      #expect(directory.cacheEntries == ["%55ser%2F42.json"])
      let data = try Data(contentsOf: URL(fileURLWithPath: recordPath("User/42", in: directory)))
      let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
      #expect(object["version"] as? String == "7")
      #expect((object["written"] as? NSNumber)?.doubleValue == 1_700_000_000.25)
      #expect(object["name"] as? String == "User/42")
      let value = try #require(object["value"] as? [String: Any])
      #expect(value["name"] as? String == "Ada")
      #expect(value["age"] as? Int == 36)
    }
  }

  @Test func theDirectoryIsCreatedWithItsParentsByTheFirstWrite() async throws {
    try await TemporaryDirectory.with { directory in
      let nested = directory.base + "/a/b/c/"
      let storage = FileCacheStorage(directory: nested)
      #expect(try await storage.read(Int.self, at: "count") == nil)
      try await storage.removeAll()
      #expect(TemporaryDirectory.entries(of: directory.base).isEmpty)  // neither created the directory
      try await storage.write(3, at: "count")
      #expect(TemporaryDirectory.entries(of: nested) == ["count.json"])
      #expect(try await storage.read(Int.self, at: "count") == 3)
    }
  }

  @Test func aDirectoryThatCannotBeCreatedThrowsAFileSystemError() async throws {
    try await TemporaryDirectory.with { directory in
      let file = directory.base + "/file"
      try Data("not a directory".utf8).write(to: URL(fileURLWithPath: file))
      let storage = FileCacheStorage(directory: file + "/cache")
      let error = await #expect(throws: FileCacheStorageError.self) { try await storage.write(1, at: "count") }
      guard case .fileSystem(let operation, let path, let code)? = error else {
        Issue.record("\(String(describing: error))")
        return
      }
      #expect(operation == "mkdir")
      #expect(path == file + "/cache")
      #expect(code != 0)
      #expect(TemporaryDirectory.entries(of: directory.base) == ["file"])
    }
  }

  // MARK: - Version, age, corruption

  @Test func aRecordOfAnotherVersionReadsNilAndItsFileIsDeleted() async throws {
    try await TemporaryDirectory.with { directory in
      try await FileCacheStorage(directory: directory.cache, version: "1").write("old shape", at: "feed")
      let storage = FileCacheStorage(directory: directory.cache, version: "2")
      #expect(try await storage.read([Int].self, at: "feed") == nil)  // its value is not even decoded
      #expect(directory.cacheEntries.isEmpty)
      #expect(try await FileCacheStorage(directory: directory.cache, version: "1").read(String.self, at: "feed") == nil)
    }
  }

  @Test func withMaxAgeZeroEveryRecordReadsNilAndIsDeleted() async throws {
    try await TemporaryDirectory.with { directory in
      try await FileCacheStorage(directory: directory.cache).write(1, at: "count")
      let storage = FileCacheStorage(directory: directory.cache, maxAge: .zero)
      #expect(try await storage.read(Int.self, at: "count") == nil)
      #expect(directory.cacheEntries.isEmpty)
      // Even one written by the storage itself, at the same instant.
      let clock = ManualClock()
      let frozen = FileCacheStorage(directory: directory.cache, maxAge: .zero, now: { clock.now() })
      try await frozen.write(2, at: "count")
      #expect(try await frozen.read(Int.self, at: "count") == nil)
    }
  }

  @Test func aRecordExpiresWhenItsAgeReachesMaxAge() async throws {
    try await TemporaryDirectory.with { directory in
      let clock = ManualClock()
      let storage = FileCacheStorage(directory: directory.cache, maxAge: .seconds(60), now: { clock.now() })
      try await storage.write("fresh", at: "feed")
      clock.advance(by: 59.999)
      #expect(try await storage.read(String.self, at: "feed") == "fresh")
      clock.advance(by: 0.001)
      #expect(try await storage.read(String.self, at: "feed") == nil)
      #expect(directory.cacheEntries.isEmpty)
      // A large maxAge keeps a record read at real time.
      let lasting = FileCacheStorage(directory: directory.cache, maxAge: .seconds(1_000_000_000))
      try await lasting.write("kept", at: "feed")
      #expect(try await lasting.read(String.self, at: "feed") == "kept")
    }
  }

  @Test func aCorruptedOrUndecodableRecordThrowsAndRemoveClearsIt() async throws {
    try await TemporaryDirectory.with { directory in
      let storage = FileCacheStorage(directory: directory.cache)
      try await storage.write(Profile(name: "Ada", age: 36, tags: [], score: 1), at: "profile")
      let path = recordPath("profile", in: directory)
      let record = try Data(contentsOf: URL(fileURLWithPath: path))
      // Torn: half a record.
      try record.prefix(record.count / 2).write(to: URL(fileURLWithPath: path))
      await #expect(throws: DecodingError.self) { try await storage.read(Profile.self, at: "profile") }
      // Not JSON at all.
      try Data("not json".utf8).write(to: URL(fileURLWithPath: path))
      await #expect(throws: DecodingError.self) { try await storage.read(Profile.self, at: "profile") }
      // JSON, but not a record.
      try Data(#"{"value": 1}"#.utf8).write(to: URL(fileURLWithPath: path))
      await #expect(throws: DecodingError.self) { try await storage.read(Int.self, at: "profile") }
      // A record whose value is of another type.
      try await storage.write("a string", at: "profile")
      await #expect(throws: DecodingError.self) { try await storage.read(Profile.self, at: "profile") }
      // What the cache does next.
      try await storage.remove(at: "profile")
      #expect(try await storage.read(Profile.self, at: "profile") == nil)
      #expect(directory.cacheEntries.isEmpty)
    }
  }

  // MARK: - Names

  @Test func hostileNamesRoundTripEachInItsOwnFileDirectlyInsideTheDirectory() async throws {
    try await TemporaryDirectory.with { directory in
      let long = String(repeating: "é/", count: 2_500)
      let names = [
        "/", "..", "../x", "a/b", "", "é🙂", String(repeating: "n", count: 10_000), long + "1", long + "2", "A", "a",
        ".", "x.json", ".tmp", "%", "%25", "%2F", "\0", "~", " ", "a\nb", "\u{E9}",
      ]
      #expect(Set(names).count == names.count)
      let storage = FileCacheStorage(directory: directory.cache)
      for (index, name) in names.enumerated() {
        try await storage.write(index, at: name)
      }
      let other = FileCacheStorage(directory: directory.cache)
      for (index, name) in names.enumerated() {
        #expect(try await other.read(Int.self, at: name) == index, "\(name.prefix(20))")
      }
      let entries = directory.cacheEntries
      #expect(entries.count == names.count)  // no clobbering, nothing else
      for entry in entries {
        #expect(entry.utf8.count <= 200)
        #expect(!entry.contains("/"))
        #expect(RecordFileName.isRecord(entry))
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.cache + "/" + entry)
        #expect(attributes[.type] as? FileAttributeType == .typeRegular)  // no subdirectory
      }
      // Nothing outside the directory: `base` holds the directory only.
      #expect(TemporaryDirectory.entries(of: directory.base) == ["cache"])
      // The names whose escapes are case-insensitively equal without upper-case escaping stay apart.
      #expect(Set(entries.map { $0.lowercased() }).count == entries.count)
    }
  }

  @Test func fileNamesAreEscapedOrHashedAndRecognized() {
    #expect(RecordFileName("feed").value == "feed.json")
    #expect(RecordFileName("User/42").value == "%55ser%2F42.json")
    #expect(RecordFileName("../x").value == "%2E%2E%2Fx.json")
    #expect(RecordFileName("").value == "%.json")
    #expect(RecordFileName("é").value == "%C3%A9.json")
    let atLimit = String(repeating: "n", count: RecordFileName.maxEscapedBytes)
    #expect(RecordFileName(atLimit).value.utf8.count == 200)
    #expect(!RecordFileName(atLimit).isHashed)
    let long = RecordFileName(atLimit + "n")
    #expect(long.isHashed)
    #expect(long.value.hasPrefix(String(repeating: "n", count: RecordFileName.prefixBytes) + "."))
    #expect(long.value.hasSuffix(".196.json"))
    #expect(long.value.utf8.count <= 200)
    #expect(RecordFileName(String(repeating: "🙂", count: 10_000)).value.utf8.count <= 200)
    #expect(RecordFileName.fnv1a64("".utf8) == 0xcbf2_9ce4_8422_2325)
    #expect(RecordFileName.fnv1a64("a".utf8) == 0xaf63_dc4c_8601_ec8c)  // the published FNV-1a 64 test vector

    for name in ["feed", "User/42", "", "..", atLimit, atLimit + "n"] {
      #expect(RecordFileName.isRecord(RecordFileName(name).value))
    }
    let temporary = RecordFileName.temporary(uuid: UUID().uuidString)
    #expect(RecordFileName.isTemporary(temporary))
    #expect(!RecordFileName.isRecord(temporary))
    for foreign in ["notes.txt", ".DS_Store", "Feed.json", "%2e.json", "%61.json", "%2.json", "a.b.json", ".json"] {
      #expect(!RecordFileName.isRecord(foreign), "\(foreign)")
      #expect(!RecordFileName.isTemporary(foreign), "\(foreign)")
    }
  }

  @Test func namesEqualAsSwiftStringsShareTheirRecord() async throws {
    try await TemporaryDirectory.with { directory in
      let (decomposed, precomposed) = ("e\u{301}", "\u{E9}")
      #expect(decomposed == precomposed)
      let storage = FileCacheStorage(directory: directory.cache)
      try await storage.write(1, at: decomposed)
      #expect(try await storage.read(Int.self, at: precomposed) == 1)
      try await storage.write(2, at: precomposed)
      #expect(try await storage.read(Int.self, at: decomposed) == 2)
      #expect(directory.cacheEntries == ["%C3%A9.json"])
    }
  }

  @Test func aHashedFileHoldingAnotherNamesRecordReadsNilAndIsNotRemoved() async throws {
    try await TemporaryDirectory.with { directory in
      let long = String(repeating: "x", count: 300)
      let (first, second) = (long + "1", long + "2")
      #expect(RecordFileName(first).value != RecordFileName(second).value)
      let storage = FileCacheStorage(directory: directory.cache)
      try await storage.write("first", at: first)
      // Simulate a hash collision: `second`'s file holds `first`'s record.
      try FileManager.default.copyItem(
        atPath: recordPath(first, in: directory), toPath: recordPath(second, in: directory))
      #expect(try await storage.read(String.self, at: second) == nil)
      try await storage.remove(at: second)
      #expect(FileManager.default.fileExists(atPath: recordPath(second, in: directory)))
      #expect(try await storage.read(String.self, at: first) == "first")
      // Writing `second` takes the file over.
      try await storage.write("second", at: second)
      #expect(try await storage.read(String.self, at: second) == "second")
    }
  }

  // MARK: - Size limit

  @Test func overMaxBytesTheLeastRecentlyWrittenRecordsAreDeleted() async throws {
    try await TemporaryDirectory.with { directory in
      let clock = ManualClock()
      let value = String(repeating: "v", count: 100)
      let unlimited = FileCacheStorage(directory: directory.cache, now: { clock.now() })
      try await unlimited.write(value, at: "k1")
      let size = try #require(try POSIXFile.regularFileStatus(at: recordPath("k1", in: directory))).bytes
      // A foreign file is not counted.
      try Data(count: 10 * size).write(to: URL(fileURLWithPath: directory.cache + "/big.bin"))
      let storage = FileCacheStorage(directory: directory.cache, maxBytes: 3 * size + size / 2, now: { clock.now() })
      for name in ["k2", "k3"] {
        clock.advance(by: 1)
        try await storage.write(value, at: name)
      }
      #expect(directory.cacheEntries == ["big.bin", "k1.json", "k2.json", "k3.json"])
      clock.advance(by: 1)
      try await storage.write(value, at: "k4")
      #expect(directory.cacheEntries == ["big.bin", "k2.json", "k3.json", "k4.json"])
      #expect(try await storage.read(String.self, at: "k1") == nil)

      // Least recently written, not least recently read: rewriting k2 makes k3 the oldest, reading k3 does not.
      clock.advance(by: 1)
      try await storage.write(value, at: "k2")
      #expect(try await storage.read(String.self, at: "k3") == value)
      clock.advance(by: 1)
      try await storage.write(value, at: "k5")
      #expect(directory.cacheEntries == ["big.bin", "k2.json", "k4.json", "k5.json"])

      // A record twice the size evicts two.
      clock.advance(by: 1)
      try await storage.write(value + value, at: "k6")
      #expect(directory.cacheEntries == ["big.bin", "k5.json", "k6.json"])
      for name in ["k5", "k6"] {
        #expect(try await storage.read(String.self, at: name) != nil)
      }
    }
  }

  @Test func aRecordLargerThanMaxBytesThrowsIsNotStoredAndRemovesTheOlderRecord() async throws {
    try await TemporaryDirectory.with { directory in
      let storage = FileCacheStorage(directory: directory.cache, maxBytes: 200)
      try await storage.write("small", at: "feed")
      try await storage.write("other", at: "other")
      let error = await #expect(throws: FileCacheStorageError.self) {
        try await storage.write(String(repeating: "x", count: 1_000), at: "feed")
      }
      guard case .recordTooLarge(let name, let bytes, let limit)? = error else {
        Issue.record("\(String(describing: error))")
        return
      }
      #expect(name == "feed")
      #expect(bytes > 1_000)
      #expect(limit == 200)
      #expect(try await storage.read(String.self, at: "feed") == nil)
      #expect(try await storage.read(String.self, at: "other") == "other")
      #expect(directory.cacheEntries == ["other.json"])
      // With no limit, the same record is stored.
      try await FileCacheStorage(directory: directory.cache).write(String(repeating: "x", count: 1_000), at: "feed")
      #expect(directory.cacheEntries == ["feed.json", "other.json"])
    }
  }

  // MARK: - Atomic writes

  @Test func aWriteThatFailsBeforeItsRenameLeavesTheOldRecordAndNoTemporaryFile() async throws {
    try await TemporaryDirectory.with { directory in
      try await FileCacheStorage(directory: directory.cache).write("old", at: "feed")
      let failing = FileCacheStorage(
        directory: directory.cache, now: { Date() },
        beforeRename: { temporaryPath in
          // The new record is complete, beside the old one, under a name that is not a record's.
          #expect(FileManager.default.fileExists(atPath: temporaryPath))
          #expect(RecordFileName.isTemporary(URL(fileURLWithPath: temporaryPath).lastPathComponent))
          throw Interrupted()
        })
      await #expect(throws: Interrupted.self) { try await failing.write("new", at: "feed") }
      #expect(try await failing.read(String.self, at: "feed") == "old")
      #expect(directory.cacheEntries == ["feed.json"])
    }
  }

  @Test func aTemporaryFileLeftByACrashIsNeverReadAndRemoveAllDeletesIt() async throws {
    try await TemporaryDirectory.with { directory in
      let storage = FileCacheStorage(directory: directory.cache)
      try await storage.write("old", at: "feed")
      // A crash between the temporary file's write and its rename: the complete new record stays as a stray.
      let stray = directory.cache + "/" + RecordFileName.temporary(uuid: UUID().uuidString)
      let crashing = FileCacheStorage(
        directory: directory.cache, now: { Date() },
        beforeRename: { temporaryPath in
          try FileManager.default.copyItem(atPath: temporaryPath, toPath: stray)
          throw Interrupted()
        })
      await #expect(throws: Interrupted.self) { try await crashing.write("new", at: "feed") }
      #expect(directory.cacheEntries.count == 2)
      #expect(FileManager.default.fileExists(atPath: stray))
      #expect(try await storage.read(String.self, at: "feed") == "old")
      // The next write replaces the record; the stray stays unread.
      try await storage.write("newer", at: "feed")
      #expect(try await storage.read(String.self, at: "feed") == "newer")
      try await storage.removeAll()
      #expect(directory.cacheEntries.isEmpty)
    }
  }

  @Test func aWritesEvictionDeletesTemporaryFilesAnHourOldOnly() async throws {
    try await TemporaryDirectory.with { directory in
      let clock = ManualClock()
      let storage = FileCacheStorage(directory: directory.cache, maxBytes: 10_000, now: { clock.now() })
      try await storage.write(1, at: "a")
      let written = clock.now().timeIntervalSince1970
      let old = directory.cache + "/" + RecordFileName.temporary(uuid: UUID().uuidString)
      let young = directory.cache + "/" + RecordFileName.temporary(uuid: UUID().uuidString)
      try POSIXFile.create(at: old, bytes: Array("{}".utf8), modified: written - FileCacheStorage.temporaryLifetime - 1)
      try POSIXFile.create(at: young, bytes: Array("{}".utf8), modified: written - 60)
      try await storage.write(2, at: "b")
      #expect(!FileManager.default.fileExists(atPath: old))
      #expect(FileManager.default.fileExists(atPath: young))
      #expect(directory.cacheEntries.filter(RecordFileName.isRecord) == ["a.json", "b.json"])
    }
  }

  // MARK: - Remove

  @Test func removeDeletesOneRecordAndRemoveAllDeletesTheRecordFilesOnly() async throws {
    try await TemporaryDirectory.with { directory in
      let storage = FileCacheStorage(directory: directory.cache)
      for name in ["a", "b", "", "/", String(repeating: "l", count: 500)] {
        try await storage.write(name, at: name)
      }
      try await storage.remove(at: "a")
      try await storage.remove(at: "a")  // a missing record is no error
      try await storage.remove(at: "never written")
      #expect(try await storage.read(String.self, at: "a") == nil)
      #expect(try await storage.read(String.self, at: "b") == "b")

      try Data("keep".utf8).write(to: URL(fileURLWithPath: directory.cache + "/notes.txt"))
      try Data("keep".utf8).write(to: URL(fileURLWithPath: directory.cache + "/.DS_Store"))
      try FileManager.default.createDirectory(atPath: directory.cache + "/sub.json", withIntermediateDirectories: false)
      try await storage.removeAll()
      #expect(directory.cacheEntries == [".DS_Store", "notes.txt", "sub.json"])
      for name in ["b", "", "/", String(repeating: "l", count: 500)] {
        #expect(try await storage.read(String.self, at: name) == nil)
      }
      try await storage.write("again", at: "b")  // the directory is still usable
      #expect(try await storage.read(String.self, at: "b") == "again")
    }
  }

  // MARK: - Concurrency

  @Test func concurrentWritesOfDifferentNamesFromManyTasksAllLand() async throws {
    try await TemporaryDirectory.with { directory in
      let storages = [FileCacheStorage(directory: directory.cache), FileCacheStorage(directory: directory.cache)]
      let count = 200
      try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<count {
          group.addTask {
            try await storages[index % 2].write(
              Profile(name: "\(index)", age: index, tags: [], score: nil), at: "p\(index)")
          }
        }
        try await group.waitForAll()
      }
      let reader = FileCacheStorage(directory: directory.cache)
      for index in 0..<count {
        #expect(try await reader.read(Profile.self, at: "p\(index)")?.age == index)
      }
      #expect(directory.cacheEntries.count == count)
      #expect(directory.cacheEntries.allSatisfy(RecordFileName.isRecord))
    }
  }

  @Test func concurrentWritesOfOneNameLeaveOneWholeRecord() async throws {
    try await TemporaryDirectory.with { directory in
      let storages = (0..<4).map { _ in FileCacheStorage(directory: directory.cache) }
      try await withThrowingTaskGroup(of: Void.self) { group in
        for index in 0..<100 {
          group.addTask {
            try await storages[index % 4].write(Array(repeating: index, count: 100 + index), at: "shared")
          }
        }
        try await group.waitForAll()
      }
      let values = try #require(try await storages[0].read([Int].self, at: "shared"))
      #expect(values.count == 100 + values[0])
      #expect(Set(values).count == 1)
      #expect(directory.cacheEntries == ["shared.json"])
    }
  }
}

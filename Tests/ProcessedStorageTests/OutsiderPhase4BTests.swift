import Foundation
import Processed
import ProcessedStorage
import ProcessedTesting
import Testing

// Outsider tests of "A cache that outlives the launch" (SPEC.md, phase 4), written against the spec's sentences only.

/// A storage in memory: logs every call, can hold reads at a gate, fail reads/writes by name, and lets a test await
/// a number of writes with a time limit (no real sleep decides anything; the limit only turns a hang into a failure).
fileprivate actor OStorage: CacheStorage {
  struct Failure: Error {}
  var records: [String: any Sendable]
  var log: [String] = []
  var failingReads: Set<String> = []
  var failingWrites: Set<String> = []
  var holding = false
  var held: [CheckedContinuation<Void, Never>] = []
  var watchers: [(id: Int, predicate: @Sendable ([String]) -> Bool, continuation: CheckedContinuation<Bool, Never>)] =
    []
  var nextID = 0

  init(_ records: [String: any Sendable] = [:]) { self.records = records }

  var reads: Int { log.count { $0.hasPrefix("read ") } }
  var writes: [String] { log.filter { $0.hasPrefix("write ") } }
  var heldCount: Int { held.count }

  func read<V: Codable & Sendable>(_ type: V.Type, at name: String) async throws -> V? {
    append("read \(name)")
    if holding {
      await withCheckedContinuation {
        held.append($0); notify()
      }
    }
    if failingReads.contains(name) { throw Failure() }
    guard let record = records[name] else { return nil }
    guard let value = record as? V else { throw Failure() }
    return value
  }

  func write<V: Codable & Sendable>(_ value: V, at name: String) async throws {
    append("write \(name) \(value)")
    if failingWrites.contains(name) { throw Failure() }
    records[name] = value
  }

  func remove(at name: String) async throws {
    append("remove \(name)")
    if failingWrites.contains(name) { throw Failure() }
    records[name] = nil
  }

  func removeAll() async throws {
    append("removeAll")
    records = [:]
  }

  func hold() { holding = true }
  func open() {
    holding = false
    let waiting = held
    held = []
    for continuation in waiting { continuation.resume() }
  }
  func failReads(_ name: String) { failingReads.insert(name) }
  func failWrites(_ name: String) { failingWrites.insert(name) }
  func record(_ name: String) -> (any Sendable)? { records[name] }

  private func append(_ line: String) {
    log.append(line)
    notify()
  }

  private func notify() {
    let snapshot = log + held.map { _ in "<held>" }
    let ready = watchers.indices.filter { watchers[$0].predicate(snapshot) }
    for index in ready.reversed() { watchers.remove(at: index).continuation.resume(returning: true) }
  }

  /// Returns true once `predicate` holds for the log ("<held>" lines added for held reads); false after `limit`.
  func until(_ limit: Duration = .seconds(20), _ predicate: @escaping @Sendable ([String]) -> Bool) async -> Bool {
    if predicate(log + held.map { _ in "<held>" }) { return true }
    nextID += 1
    let id = nextID
    // Registered in a task of this actor's, which may run after more lines came: it checks the log again first.
    let waiting = Task {
      await withCheckedContinuation { continuation in
        if predicate(log + held.map { _ in "<held>" }) {
          continuation.resume(returning: true)
        } else {
          watchers.append((id, predicate, continuation))
        }
      }
    }
    do {
      return try await waiting.value(timeLimit: limit)  // a hang detector only: the expected path never reaches it
    } catch {
      expire(id)
      return false
    }
  }

  private func expire(_ id: Int) {
    guard let index = watchers.firstIndex(where: { $0.id == id }) else { return }
    watchers.remove(at: index).continuation.resume(returning: false)
  }
}

@MainActor
private final class OScreen {
  @Loadable var number: LoadableState<Int>
  @Loadable var text: LoadableState<String>
  @Loadable var feed: LoadableState<Pages<Int, Int>>
}

/// Collects the events a cache reported, once it is released (its stream then ends), with a time limit.
@MainActor
private func events(afterReleasing cache: inout LoadCache?) async throws -> [String] {
  guard let stream = cache?.storageEvents else { return [] }
  cache = nil
  let task = Task { () -> [String] in
    var seen: [String] = []
    for await event in stream {
      switch event {
      case .restored(let name): seen.append("restored \(name)")
      case .dropped(let name, _): seen.append("dropped \(name)")
      case .writeFailed(let name, _): seen.append("writeFailed \(name)")
      }
    }
    return seen
  }
  return try await task.value(timeLimit: .seconds(20))
}

/// The next event of a stream, with a time limit.
private func nextEvent(_ stream: AsyncStream<StorageEvent>) async throws -> String? {
  let task = Task { () -> String? in
    var iterator = stream.makeAsyncIterator()
    switch await iterator.next() {
    case .restored(let name): return "restored \(name)"
    case .dropped(let name, _): return "dropped \(name)"
    case .writeFailed(let name, _): return "writeFailed \(name)"
    case nil: return nil
    }
  }
  return try await task.value(timeLimit: .seconds(20))
}

private func withTemporaryDirectory<R>(
  isolation: isolated (any Actor)? = #isolation, _ body: (String) async throws -> R
) async throws -> R {
  let base = FileManager.default.temporaryDirectory.appendingPathComponent("OutsiderPhase4B-\(UUID().uuidString)").path
  try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: base) }
  return try await body(base)
}

@MainActor
@Suite struct OutsiderPhase4BPersistenceTests {
  let clock = TestClock()
  func key(_ name: String) -> CacheKey<Int> { CacheKey<Int>(name).persisted() }
  func name(_ name: String) -> String { key(name).storageName! }

  // MARK: Restore on the next launch

  @Test func aFileStoredValueIsRestoredStaleOnTheNextLaunchAndRefetched() async throws {
    try await withTemporaryDirectory { directory in
      do {
        let cache = LoadCache(storage: FileCacheStorage(directory: directory + "/c"), clock: clock)
        let screen = OScreen()
        try await screen.$number.load(key("a"), in: cache) { 1 }.value(timeLimit: .seconds(20))
        await cache.flush()
      }
      // A long stale time: the restored value comes from an earlier launch and is stale anyway.
      let cache = LoadCache(
        staleTime: .seconds(10_000), storage: FileCacheStorage(directory: directory + "/c"),
        clock: clock)
      let screen = OScreen()
      let states = StateRecorder(screen.$number)
      var runs = 0
      try await screen.$number.load(key("a"), in: cache) {
        runs += 1
        return 2
      }.value(timeLimit: .seconds(20))
      #expect(states.values == [.loaded(1), .loaded(2)])  // no .loading
      #expect(runs == 1)
      #expect(try await nextEvent(cache.storageEvents) == "restored \(name("a"))")
    }
  }

  @Test func nothingIsReadAtLaunchAndOnlyTheKeyUsedIsRead() async throws {
    let storage = OStorage([name("a"): 1, name("b"): 2, name("c"): 3])
    let cache = LoadCache(storage: storage, clock: clock)
    #expect(cache.count == 0)
    #expect(cache.value(for: key("a")) == nil)  // value(for:) reads memory only
    #expect(await storage.log.isEmpty)
    let screen = OScreen()
    try await screen.$number.load(key("b"), in: cache) { 20 }.value(timeLimit: .seconds(20))
    #expect(await storage.log.filter { $0.hasPrefix("read") } == ["read \(name("b"))"])
  }

  @Test func nothingIsWrittenToTheStateAndNothingFetchedBeforeTheReadEnds() async throws {
    let storage = OStorage([name("a"): 5])
    await storage.hold()
    let cache = LoadCache(storage: storage, clock: clock)
    let screen = OScreen()
    let states = StateRecorder(screen.$number)
    var runs = 0
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache) {
      runs += 1
      return 6
    }
    #expect(await storage.until { $0.contains("<held>") })
    for _ in 0..<50 { await Task.yield() }
    #expect(states.values.isEmpty)
    #expect(runs == 0)
    await storage.open()
    try await task.value(timeLimit: .seconds(20))
    #expect(states.values == [.loaded(5), .loaded(6)])
    #expect(runs == 1)
  }

  @Test func valueForFetchReturnsTheRestoredValueAndRefreshesInTheBackground() async throws {
    let storage = OStorage([name("a"): 5])
    let cache = LoadCache(staleTime: .seconds(1_000), storage: storage, clock: clock)
    let value = try await Task { try await cache.value(for: key("a")) { 6 } }.value(timeLimit: .seconds(20))
    #expect(value == 5)
    var seen: Int?
    for _ in 0..<500 {
      seen = cache.value(for: key("a"))
      if seen == 6 { break }
      await Task.yield()
    }
    #expect(seen == 6)
  }

  @Test func aSetDuringTheReadWinsOverTheRestoreForAValueCaller() async throws {
    let storage = OStorage([name("a"): 5])
    await storage.hold()
    var cache: LoadCache? = LoadCache(staleTime: .seconds(100), storage: storage, clock: clock)
    do {
      let strong = cache!
      let caller = Task { try await strong.value(for: key("a")) { 7 } }
      #expect(await storage.until { $0.contains("<held>") })
      strong.set(9, for: key("a"))
      await storage.open()
      let value = try await caller.value(timeLimit: .seconds(20))
      #expect(value == 9)  // the caller returns what overtook its fetch: the value of a set
      #expect(strong.value(for: key("a")) == 9)
      await strong.flush()
    }
    #expect(await storage.record(name("a")) as? Int == 9)
    #expect(!(try await events(afterReleasing: &cache)).contains("restored \(name("a"))"))
  }

  @Test func aRefreshAsTheFirstLoadRestoresToo() async throws {
    let storage = OStorage([name("a"): 5])
    let cache = LoadCache(storage: storage, clock: clock)
    let screen = OScreen()
    let states = StateRecorder(screen.$number)
    try await screen.$number.refresh(key("a"), in: cache) { 6 }.value(timeLimit: .seconds(20))
    #expect(await storage.reads == 1)
    #expect(states.values == [.loaded(5), .loaded(6)])
  }

  @Test func aStateCancelledDuringTheReadIsLeftAsItIsAndNothingHangs() async throws {
    let storage = OStorage([name("a"): 5])
    await storage.hold()
    let cache = LoadCache(storage: storage, clock: clock)
    let screen = OScreen()
    let states = StateRecorder(screen.$number)
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache) { 6 }
    #expect(await storage.until { $0.contains("<held>") })
    screen.$number.cancel()
    try await task.value(timeLimit: .seconds(20))
    await storage.open()
    for _ in 0..<50 { await Task.yield() }
    #expect(states.values.isEmpty)
    // The next load works.
    try await screen.$number.load(key("a"), in: cache) { 7 }.value(timeLimit: .seconds(20))
    #expect(screen.number == .loaded(7))
  }

  @Test func aRestoredValueShowsWhileOfflineAndItsRefetchIsPaused() async throws {
    let storage = OStorage([name("a"): 5])
    let cache = LoadCache(storage: storage, clock: clock)
    cache.setOnline(false)
    let screen = OScreen()
    let states = StateRecorder(screen.$number)
    var runs = 0
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache) {
      runs += 1
      return 6
    }
    try await states.wait(for: .loaded(5), timeLimit: .seconds(20))
    for _ in 0..<20 { await Task.yield() }
    #expect(runs == 0)
    #expect(screen.$number.activity.phase == .paused)
    cache.setOnline(true)
    try await task.value(timeLimit: .seconds(20))
    #expect(states.values == [.loaded(5), .loaded(6)])
    #expect(runs == 1)
  }

  // MARK: Writes and flush

  @Test func flushWritesThePendingLastValueAndWritesAreLeading() async throws {
    let storage = OStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))
    cache.set(2, for: key("a"))
    cache.set(3, for: key("a"))
    await cache.flush()
    #expect(await storage.record(name("a")) as? Int == 3)
    #expect(await storage.writes == ["write \(name("a")) 1", "write \(name("a")) 3"])
  }

  @Test func theFirstChangeIsWrittenAtOnceAndLaterOnesOncePerSecondOnTheCachesClock() async throws {
    let storage = OStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))
    #expect(await storage.until { $0.count { $0.hasPrefix("write") } == 1 })  // leading, without a flush
    cache.set(2, for: key("a"))
    cache.set(3, for: key("a"))
    for _ in 0..<50 { await Task.yield() }
    #expect(await storage.writes.count == 1)
    clock.advance(by: .milliseconds(999))
    for _ in 0..<50 { await Task.yield() }
    #expect(await storage.writes.count == 1)
    clock.advance(by: .milliseconds(1))
    #expect(await storage.until { $0.count { $0.hasPrefix("write") } == 2 })
    #expect(await storage.writes == ["write \(name("a")) 1", "write \(name("a")) 3"])
  }

  @Test func eachKeyIsWrittenOnItsOwn() async throws {
    let storage = OStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))
    cache.set(2, for: key("b"))
    cache.set(3, for: CacheKey<Int>("plain"))  // not persisted: never stored
    await cache.flush()
    let writes = await storage.writes.sorted()
    #expect(writes == ["write \(name("a")) 1", "write \(name("b")) 2"])
  }

  @Test func removeRemovesTheRecordAndTheNextLaunchMisses() async throws {
    let storage = OStorage()
    do {
      let cache = LoadCache(storage: storage, clock: clock)
      cache.set(1, for: key("a"))
      await cache.flush()
      cache.remove(key("a"))
      await cache.flush()
    }
    #expect(await storage.record(name("a")) == nil)
    let cache = LoadCache(storage: storage, clock: clock)
    let screen = OScreen()
    let states = StateRecorder(screen.$number)
    try await screen.$number.load(key("a"), in: cache) { 2 }.value(timeLimit: .seconds(20))
    #expect(states.values == [.loading, .loaded(2)])
  }

  @Test func removeOfAKeyNeverReadThisLaunchRemovesItsRecord() async throws {
    let storage = OStorage([name("a"): 1])
    let cache = LoadCache(storage: storage, clock: clock)
    cache.remove(key("a"))  // a persisted key: its record goes
    await cache.flush()
    #expect(await storage.record(name("a")) == nil)
  }

  @Test func removeAllRemovesRecordsOfKeysNeverReadThisLaunch() async throws {
    let storage = OStorage([name("a"): 1, name("b"): 2])
    let cache = LoadCache(storage: storage, clock: clock)
    cache.removeAll()
    await cache.flush()
    #expect(await storage.records.isEmpty)
    #expect(await storage.log.contains("removeAll"))
  }

  @Test func invalidationChangesNoRecord() async throws {
    let storage = OStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))
    await cache.flush()
    cache.invalidate(key("a"))
    cache.invalidateAll()
    cache.invalidate(prefix: "a")
    await cache.flush()
    #expect(await storage.record(name("a")) as? Int == 1)
    #expect(await !storage.log.contains { $0.hasPrefix("remove") })
  }

  @Test func anOptimisticValueAndAnErrorAreNeverWritten() async throws {
    let storage = OStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))
    await cache.flush()
    clock.advance(by: .seconds(5))
    struct Boom: Error {}
    let mutation = Task { @MainActor in
      try await cache.mutate(key("a"), optimistic: { $0 += 100 }) {
        await cache.flush()  // while the optimistic value shows
        throw Boom()
      }
    }
    await #expect(throws: Boom.self) { try await mutation.value(timeLimit: .seconds(20)) }
    await cache.flush()
    #expect(await !storage.writes.contains { $0.hasSuffix(" 101") })
    #expect(await storage.record(name("a")) as? Int == 1)
    // An error is never written.
    let screen = OScreen()
    try await screen.$number.load(key("b"), in: cache) { throw Boom() }.value(timeLimit: .seconds(20))
    await cache.flush()
    #expect(await !storage.writes.contains { $0.contains(name("b")) })
  }

  @Test func releasingACacheDeletesNoRecord() async throws {
    let storage = OStorage()
    var cache: LoadCache? = LoadCache(storage: storage, clock: clock)
    cache!.set(4, for: key("a"))
    await cache!.flush()
    _ = try await events(afterReleasing: &cache)
    #expect(await storage.record(name("a")) as? Int == 4)
    #expect(await !storage.log.contains { $0.hasPrefix("remove") })
  }

  // MARK: Failures

  @Test func aReadThatThrowsIsDroppedRemovedAndTheLoadIsAMiss() async throws {
    let storage = OStorage([name("a"): 1])
    await storage.failReads(name("a"))
    var cache: LoadCache? = LoadCache(storage: storage, clock: clock)
    let screen = OScreen()
    let states = StateRecorder(screen.$number)
    try await screen.$number.load(key("a"), in: cache!) { 2 }.value(timeLimit: .seconds(20))
    #expect(states.values == [.loading, .loaded(2)])
    await cache!.flush()
    #expect(await storage.log.contains("remove \(name("a"))"))
    #expect(try await events(afterReleasing: &cache) == ["dropped \(name("a"))"])
  }

  @Test func aFailedWriteIsReportedAndTheLoadIsUnharmed() async throws {
    let storage = OStorage()
    await storage.failWrites(name("a"))
    var cache: LoadCache? = LoadCache(storage: storage, clock: clock)
    let screen = OScreen()
    try await screen.$number.load(key("a"), in: cache!) { 2 }.value(timeLimit: .seconds(20))
    #expect(screen.number == .loaded(2))
    await cache!.flush()
    cache!.remove(key("a"))  // a failed remove is reported as .writeFailed too
    await cache!.flush()
    #expect(try await events(afterReleasing: &cache) == ["writeFailed \(name("a"))", "writeFailed \(name("a"))"])
  }

  @Test func aCorruptFileIsDroppedDeletedAndTheLoadIsAMiss() async throws {
    try await withTemporaryDirectory { directory in
      let path = directory + "/c"
      do {
        let cache = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
        cache.set(1, for: key("a"))
        await cache.flush()
      }
      let files = try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }
      #expect(files.count == 1)
      let file = path + "/" + files[0]
      try Data("{ not json".utf8).write(to: URL(fileURLWithPath: file))
      var cache: LoadCache? = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
      let screen = OScreen()
      let states = StateRecorder(screen.$number)
      try await screen.$number.load(key("a"), in: cache!) { 2 }.value(timeLimit: .seconds(20))
      #expect(states.values == [.loading, .loaded(2)])
      await cache!.flush()
      #expect(try await events(afterReleasing: &cache) == ["dropped \(name("a"))"])
      // The new value was stored after the corrupt record was removed.
      let next = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
      let value = try await Task { try await next.value(for: key("a")) { 3 } }.value(timeLimit: .seconds(20))
      #expect(value == 2)
    }
  }

  @Test func anEmptyFileIsDroppedToo() async throws {
    try await withTemporaryDirectory { directory in
      let path = directory + "/c"
      do {
        let cache = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
        cache.set(1, for: key("a"))
        await cache.flush()
      }
      let files = try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }
      try Data().write(to: URL(fileURLWithPath: path + "/" + files[0]))
      let cache = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
      let screen = OScreen()
      let states = StateRecorder(screen.$number)
      try await screen.$number.load(key("a"), in: cache) { 2 }.value(timeLimit: .seconds(20))
      #expect(states.values == [.loading, .loaded(2)])
      #expect(try await nextEvent(cache.storageEvents) == "dropped \(name("a"))")
    }
  }

  @Test func aKeyWhoseValueTypeChangedUnderAnExplicitNameIsDroppedAndMisses() async throws {
    try await withTemporaryDirectory { directory in
      let path = directory + "/c"
      do {
        let cache = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
        cache.set(41, for: CacheKey<Int>("profile").persisted(name: "profile"))
        await cache.flush()
      }
      // The app's next version stores a String under the same name.
      let cache = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
      let screen = OScreen()
      let states = StateRecorder(screen.$text)
      try await screen.$text.load(CacheKey<String>("profile").persisted(name: "profile"), in: cache) { "new" }
        .value(timeLimit: .seconds(20))
      #expect(states.values == [.loading, .loaded("new")])
      #expect(try await nextEvent(cache.storageEvents) == "dropped profile")
    }
  }

  @Test func aKeyWhoseValueTypeChangedUnderTheDefaultNameIsAnotherRecord() async throws {
    try await withTemporaryDirectory { directory in
      let path = directory + "/c"
      #expect(CacheKey<Int>("p").persisted().storageName != CacheKey<String>("p").persisted().storageName)
      do {
        let cache = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
        cache.set(41, for: CacheKey<Int>("p").persisted())
        await cache.flush()
      }
      let cache = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
      let screen = OScreen()
      let states = StateRecorder(screen.$text)
      try await screen.$text.load(CacheKey<String>("p").persisted(), in: cache) { "new" }
        .value(timeLimit: .seconds(20))
      #expect(states.values == [.loading, .loaded("new")])
      // The Int record is still readable by the Int key.
      let value = try await Task { try await cache.value(for: CacheKey<Int>("p").persisted()) { 0 } }
        .value(timeLimit: .seconds(20))
      #expect(value == 41)
    }
  }

  @Test func anotherVersionReadsNilAndIsDeleted() async throws {
    try await withTemporaryDirectory { directory in
      let path = directory + "/c"
      do {
        let cache = LoadCache(storage: FileCacheStorage(directory: path, version: "1"), clock: clock)
        cache.set(1, for: key("a"))
        await cache.flush()
      }
      var cache: LoadCache? = LoadCache(storage: FileCacheStorage(directory: path, version: "2"), clock: clock)
      let screen = OScreen()
      let states = StateRecorder(screen.$number)
      cache!.setOnline(true)
      try await screen.$number.load(key("a"), in: cache!) { 2 }.value(timeLimit: .seconds(20))
      #expect(states.values == [.loading, .loaded(2)])
      #expect(try await events(afterReleasing: &cache) == [])  // nil is an ordinary miss, not a drop
    }
  }

  @Test func aZeroMaxAgeDropsEverything() async throws {
    try await withTemporaryDirectory { directory in
      let path = directory + "/c"
      do {
        let cache = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
        cache.set(1, for: key("a"))
        await cache.flush()
      }
      let cache = LoadCache(storage: FileCacheStorage(directory: path, maxAge: .zero), clock: clock)
      let screen = OScreen()
      let states = StateRecorder(screen.$number)
      try await screen.$number.load(key("a"), in: cache) { 2 }.value(timeLimit: .seconds(20))
      #expect(states.values == [.loading, .loaded(2)])
    }
  }

  @Test func namesWithSlashesAndDotsStayInTheDirectoryAndDoNotCollide() async throws {
    try await withTemporaryDirectory { directory in
      let path = directory + "/c"
      let names = ["/", "..", "../x", "a/b", "a%2Fb", "a_b", "", "A", "a", String(repeating: "z", count: 5_000)]
      do {
        let cache = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
        for (index, name) in names.enumerated() {
          cache.set(index, for: CacheKey<Int>("n", index).persisted(name: name))
        }
        await cache.flush()
      }
      #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["c"])
      let files = try FileManager.default.contentsOfDirectory(atPath: path).filter { !$0.hasPrefix(".") }
      #expect(files.count == names.count)
      let cache = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
      for (index, name) in names.enumerated() {
        let value = try await Task {
          try await cache.value(for: CacheKey<Int>("n", index).persisted(name: name)) { -1 }
        }
        .value(timeLimit: .seconds(20))
        #expect(value == index, "name \(name.prefix(10))")
      }
    }
  }

  @Test func aRecordLargerThanMaxBytesIsAFailedWrite() async throws {
    try await withTemporaryDirectory { directory in
      var cache: LoadCache? = LoadCache(
        storage: FileCacheStorage(directory: directory + "/c", maxBytes: 200), clock: clock)
      cache!.set(String(repeating: "x", count: 1_000), for: CacheKey<String>("big").persisted())
      await cache!.flush()
      let seen = try await events(afterReleasing: &cache)
      #expect(seen == ["writeFailed \(CacheKey<String>("big").persisted().storageName!)"])
    }
  }

  @Test func overMaxBytesTheLeastRecentlyWrittenRecordsGo() async throws {
    try await withTemporaryDirectory { directory in
      let path = directory + "/c"
      let storage = FileCacheStorage(directory: path, maxBytes: 600)
      for index in 0..<10 {
        try await storage.write(String(repeating: "v", count: 100), at: "r\(index)")
      }
      var kept = 0
      for index in 0..<10 where try await storage.read(String.self, at: "r\(index)") != nil { kept += 1 }
      #expect(kept > 0 && kept < 10)
      #expect(try await storage.read(String.self, at: "r9") != nil)  // the last written is kept
      #expect(try await storage.read(String.self, at: "r0") == nil)
    }
  }

  // MARK: Entries and names

  @Test func afterGarbageCollectionTheNextLoadReadsTheRecordAgain() async throws {
    let storage = OStorage([name("a"): 5])
    let cache = LoadCache(gcTime: .seconds(10), storage: storage, clock: clock)
    let screen = OScreen()
    try await screen.$number.load(key("a"), in: cache) { 6 }.value(timeLimit: .seconds(20))
    await cache.flush()
    screen.$number.cancel()
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(10))
    for _ in 0..<200 where cache.count > 0 { await Task.yield() }
    #expect(cache.count == 0)
    let states = StateRecorder(screen.$number)
    try await screen.$number.load(key("a"), in: cache) { 7 }.value(timeLimit: .seconds(20))
    #expect(await storage.reads == 2)
    #expect(states.values == [.loaded(6), .loaded(7)])  // the stored 6, stale, then refetched
  }

  @Test func equalIntegersOfAnyWidthGetEqualNamesAndPersistenceIsIgnoredByEquality() {
    #expect(
      CacheKey<Int>("u", Int8(3)).persisted().storageName == CacheKey<Int>("u", UInt32(3)).persisted().storageName)
    #expect(CacheKey<Int>("u", 3).persisted().storageName != CacheKey<Int>("u", "3").persisted().storageName)
    #expect(CacheKey<Int>("u", true).persisted().storageName != CacheKey<Int>("u", 1).persisted().storageName)
    #expect(CacheKey<Int>("u").storageName == nil)
    #expect(CacheKey<Int>("u").persisted(name: "x") == CacheKey<Int>("u").persisted())
    #expect(CacheKey<Int>("u").persisted(name: "x").hashValue == CacheKey<Int>("u").hashValue)
  }

  @Test func aCacheWithoutStorageHasAnEndedEventStream() async throws {
    let cache = LoadCache(clock: clock)
    #expect(try await nextEvent(cache.storageEvents) == nil)
    await cache.flush()  // returns at once
  }

  @Test func aRestoredPagedListShowsAtOnceAndRefetchesWithoutALoadingState() async throws {
    let feedKey = CacheKey<Pages<Int, Int>>("feed").persisted()
    let storage = OStorage([feedKey.storageName!: Pages(items: [1, 2, 3, 4, 5, 6], nextCursor: 6)])
    let cache = LoadCache(storage: storage, clock: clock)
    let screen = OScreen()
    let states = StateRecorder(screen.$feed)
    try await screen.$feed.load(feedKey, in: cache) { Pages(items: [10, 11, 12], nextCursor: 3) }
      .value(timeLimit: .seconds(20))
    #expect(states.values.first == .loaded(Pages(items: [1, 2, 3, 4, 5, 6], nextCursor: 6)))
    #expect(!states.values.contains(.loading))
  }
}

// MARK: - Second batch: edges of writes, removes and restores

@MainActor
@Suite struct OutsiderPhase4BPersistenceEdgeTests {
  let clock = TestClock()
  func key(_ name: String) -> CacheKey<Int> { CacheKey<Int>(name).persisted() }
  func name(_ name: String) -> String { key(name).storageName! }

  @Test func aPendingWriteDoesNotResurrectARemovedRecord() async throws {
    let storage = OStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))  // leading write
    #expect(await storage.until { $0.contains { $0.hasPrefix("write") } })
    cache.set(2, for: key("a"))  // pending (coalesced)
    cache.remove(key("a"))
    await cache.flush()
    clock.advance(by: .seconds(5))
    await cache.flush()
    #expect(await storage.record(name("a")) == nil)
  }

  @Test func aPendingWriteDoesNotResurrectRecordsAfterRemoveAll() async throws {
    let storage = OStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))
    #expect(await storage.until { $0.contains { $0.hasPrefix("write") } })
    cache.set(2, for: key("a"))
    cache.removeAll()
    await cache.flush()
    clock.advance(by: .seconds(5))
    await cache.flush()
    #expect(await storage.records.isEmpty)
  }

  @Test func aSetAfterRemoveIsWritten() async throws {
    let storage = OStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))
    cache.remove(key("a"))
    cache.set(3, for: key("a"))
    await cache.flush()
    #expect(await storage.record(name("a")) as? Int == 3)
  }

  @Test func aRemoveDuringTheReadKeepsTheOldRecordFromComingBack() async throws {
    let storage = OStorage([name("a"): 5])
    await storage.hold()
    let cache = LoadCache(storage: storage, clock: clock)
    let screen = OScreen()
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache) { 6 }
    #expect(await storage.until { $0.contains("<held>") })
    cache.remove(key("a"))
    await storage.open()
    try await task.value(timeLimit: .seconds(20))
    for _ in 0..<100 { await Task.yield() }
    await cache.flush()
    // After remove there is no record: the removed 5 must not be shown again nor stored again.
    #expect(cache.value(for: key("a")) != 5)
    #expect(await storage.record(name("a")) as? Int != 5)
  }

  @Test func aRestoredValueWhoseRefetchFailsStaysWithLastError() async throws {
    struct Down: Error {}
    let storage = OStorage([name("a"): 5])
    let cache = LoadCache(storage: storage, clock: clock)
    let screen = OScreen()
    let states = StateRecorder(screen.$number)
    try await screen.$number.load(key("a"), in: cache) { throw Down() }.value(timeLimit: .seconds(20))
    #expect(states.values == [.loaded(5)])
    #expect(screen.$number.activity.lastError is Down)
    await cache.flush()
    #expect(await storage.record(name("a")) as? Int == 5)
  }

  @Test func aStaleValueForFetchWhileOfflineReturnsAtOnce() async throws {
    let storage = OStorage([name("a"): 5])
    let cache = LoadCache(storage: storage, clock: clock)
    cache.setOnline(false)
    let value = try await Task { try await cache.value(for: key("a")) { 6 } }.value(timeLimit: .seconds(20))
    #expect(value == 5)  // restored, stale: returned at once; its refresh waits for the network
  }

  @Test func aSetDuringAMutationIsWrittenAndTheOptimisticValueIsNot() async throws {
    let storage = OStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))
    await cache.flush()
    let gate = AsyncStream<Void>.makeStream()
    let started = AsyncStream<Void>.makeStream()
    let mutation = Task { @MainActor in
      try await cache.mutate(key("a"), optimistic: { $0 += 100 }) {
        started.continuation.yield()
        for await _ in gate.stream { break }
      }
    }
    var it = started.stream.makeAsyncIterator()
    _ = await it.next()
    cache.set(2, for: key("a"))  // becomes the base: written
    await cache.flush()
    #expect(cache.value(for: key("a")) == 102)
    #expect(await storage.record(name("a")) as? Int == 2)
    gate.continuation.yield()
    try await mutation.value(timeLimit: .seconds(20))
    await cache.flush()
    #expect(await !storage.writes.contains { $0.hasSuffix(" 101") || $0.hasSuffix(" 102") })
  }

  @Test func aValueForFetchWithAThrowingReadGoesOnAsAMiss() async throws {
    let storage = OStorage([name("a"): 5])
    await storage.failReads(name("a"))
    let cache = LoadCache(storage: storage, clock: clock)
    let value = try await Task { try await cache.value(for: key("a")) { 6 } }.value(timeLimit: .seconds(20))
    #expect(value == 6)
  }

  @Test func anUndecodableRecordThroughValueForFetchIsAMiss() async throws {
    let storage = OStorage([name("a"): "text"])
    let cache = LoadCache(storage: storage, clock: clock)
    let value = try await Task { try await cache.value(for: key("a")) { 6 } }.value(timeLimit: .seconds(20))
    #expect(value == 6)
    #expect(try await nextEvent(cache.storageEvents) == "dropped \(name("a"))")
  }

  @Test func twoLoadsOfOneKeyDuringTheReadReadOnce() async throws {
    let storage = OStorage([name("a"): 5])
    await storage.hold()
    // A long stale time, so that a caller arriving after the refetch sees a fresh value and fetches nothing.
    let cache = LoadCache(staleTime: .seconds(1_000), storage: storage, clock: clock)
    let (one, two) = (OScreen(), OScreen())
    var runs = 0
    let first: Task<Void, Never> = one.$number.load(key("a"), in: cache) {
      runs += 1; return 6
    }
    #expect(await storage.until { $0.contains("<held>") })
    let second: Task<Void, Never> = two.$number.load(key("a"), in: cache) {
      runs += 1; return 7
    }
    let caller = Task {
      try await cache.value(for: key("a")) {
        await MainActor.run { runs += 1 }; return 8
      }
    }
    for _ in 0..<50 { await Task.yield() }
    await storage.open()
    try await first.value(timeLimit: .seconds(20))
    try await second.value(timeLimit: .seconds(20))
    let value = try await caller.value(timeLimit: .seconds(20))
    #expect(await storage.reads == 1)
    #expect(runs == 1)
    #expect(value == 5 || value == 6)
    #expect(one.number == .loaded(6) && two.number == .loaded(6))
  }

  @Test func afterAQuietSecondTheNextChangeIsWrittenAtOnceAgain() async throws {
    let storage = OStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))
    #expect(await storage.until { $0.count { $0.hasPrefix("write") } == 1 })
    clock.advance(by: .seconds(5))
    cache.set(2, for: key("a"))  // leading again: no change for more than a second
    #expect(await storage.until { $0.count { $0.hasPrefix("write") } == 2 })
  }

  @Test func aPendingWriteSurvivesGarbageCollection() async throws {
    let storage = OStorage()
    let cache = LoadCache(gcTime: .seconds(1), storage: storage, clock: clock)
    cache.set(1, for: key("a"))
    #expect(await storage.until { $0.count { $0.hasPrefix("write") } == 1 })
    cache.set(2, for: key("a"))  // pending
    clock.advance(by: .seconds(1))  // the entry is collected; its write is due
    for _ in 0..<100 where cache.count > 0 { await Task.yield() }
    await cache.flush()
    #expect(await storage.record(name("a")) as? Int == 2)
  }

  @Test func theFileStorageWritesAtomicallyAndLeavesOnlyRecordFiles() async throws {
    try await withTemporaryDirectory { directory in
      let path = directory + "/c"
      let cache = LoadCache(storage: FileCacheStorage(directory: path), clock: clock)
      for index in 0..<5 {
        cache.set(index, for: key("k\(index)"))
      }
      await cache.flush()
      let files = try FileManager.default.contentsOfDirectory(atPath: path)
      #expect(files.count == 5)
      #expect(files.allSatisfy { $0.hasSuffix(".json") })
    }
  }
}

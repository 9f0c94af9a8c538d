import ProcessedTesting
import Testing

@testable import Processed

/// A cache that outlives the launch (spec, "A cache that outlives the launch"), with an in-memory storage that counts,
/// fails and holds reads.
@MainActor
@Suite struct PersistenceTests {
  let clock = TestClock()

  typealias Screen = CacheScreen

  func key(_ name: String) -> CacheKey<Int> { CacheKey(name).persisted() }
  func name(_ name: String) -> String { key(name).storageName! }

  /// Every event the cache made, once it is released (the stream ends after its last storage operation).
  func events(afterReleasing cache: inout LoadCache?) async -> [String] {
    guard let stream = cache?.storageEvents else { return [] }
    cache = nil
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

  // MARK: Names

  @Test func namesAreDerivedFromTheValueTypeAndTheComponents() {
    #expect(CacheKey<Int>("count").storageName == nil)
    #expect(CacheKey<Int>("count").persisted().storageName == "9:Swift.Int|s5:count")
    #expect(CacheKey<Int>("user", 42, true).persisted().storageName == "9:Swift.Int|s4:user|i42|b1")
    // Integers of any width: equal components, equal names.
    #expect(CacheKey<Int>("u", Int8(5)).persisted().storageName == CacheKey<Int>("u", 5).persisted().storageName)
    #expect(
      CacheKey<Int>("u", UInt64(5)).persisted().storageName == CacheKey<Int>("u", Int64(5)).persisted().storageName)
    // Unequal keys, different names — also where a naive join would collide.
    let names =
      [
        CacheKey<Int>("a|b").persisted(), CacheKey<Int>("a", "b").persisted(), CacheKey<Int>("a", "|b").persisted(),
        CacheKey<Int>("1").persisted(), CacheKey<Int>(1).persisted(), CacheKey<Int>(true).persisted(),
        CacheKey<Int>("a:b").persisted(),
      ].map(\.storageName) + [CacheKey<String>(1).persisted().storageName]
    #expect(Set(names).count == names.count)
    #expect(CacheKey<Int>("x").persisted(name: "mine").storageName == "mine")
  }

  @Test func persistenceIsIgnoredByEqualityHashingAndPrefixes() {
    let plain = CacheKey<Int>("posts", 1)
    let persisted = plain.persisted()
    #expect(plain == persisted)
    #expect(Set([plain, persisted]).count == 1)
    let cache = LoadCache(clock: clock)
    cache.set(3, for: persisted)
    #expect(cache.value(for: plain) == 3)
    cache.invalidate(prefix: "posts")
    cache.remove(plain)
    #expect(cache.count == 0)
  }

  @Test func aComponentThatIsNotAStringIntegerOrBooleanStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = CacheKey<Int>("price", 1.5).persisted()
    }
    guard let result else { return }
    let message = String(decoding: result.standardErrorContent, as: UTF8.self)
    #expect(message.contains("persisted(name:)"))
  }

  // MARK: Restore

  @Test func aSecondLaunchShowsTheStoredValueStaleAndRefetches() async throws {
    let storage = MemoryStorage()
    var first: LoadCache? = LoadCache(storage: storage, clock: clock)
    let screen = Screen()
    await screen.$number.load(key("a"), in: first!) { 41 }
    await first!.flush()
    #expect(await storage.records[name("a")] as? Int == 41)
    #expect(await events(afterReleasing: &first) == [])  // releasing a cache deletes nothing
    #expect(await storage.records[name("a")] as? Int == 41)

    var second: LoadCache? = LoadCache(storage: storage, clock: clock)
    let next = Screen()
    let states = StateRecorder(next.$number)
    var runs = 0
    await next.$number.load(key("a"), in: second!) {
      runs += 1
      return 42
    }
    #expect(states.values == [.loaded(41), .loaded(42)])  // no .loading: stale, refetched
    #expect(runs == 1)
    #expect(await events(afterReleasing: &second) == ["restored \(name("a"))"])
  }

  @Test func launchCostIsTheKeysUsed() async throws {
    var records: [String: any Sendable] = [:]
    for index in 0..<10_000 { records[CacheKey<Int>("k", index).persisted().storageName!] = index }
    let storage = MemoryStorage(records)
    let cache = LoadCache(storage: storage, clock: clock)
    #expect(await storage.log.isEmpty)
    let screen = Screen()
    await screen.$number.load(CacheKey<Int>("k", 7).persisted(), in: cache) { 70 }
    #expect(await storage.reads == 1)
    #expect(await storage.log.first == "read \(CacheKey<Int>("k", 7).persisted().storageName!)")
  }

  @Test func loadsDuringTheReadJoinItAndNothingIsWrittenOrFetchedBeforeIt() async throws {
    let storage = MemoryStorage([name("a"): 5])
    await storage.holdReads()
    let cache = LoadCache(staleTime: .seconds(100), storage: storage, clock: clock)
    let (one, two) = (Screen(), Screen())
    let (oneStates, twoStates) = (StateRecorder(one.$number), StateRecorder(two.$number))
    var runs = 0
    let first: Task<Void, Never> = one.$number.load(key("a"), in: cache) {
      runs += 1
      return 6
    }
    await storage.untilReadsHeld(1)
    let second: Task<Void, Never> = two.load(\.number, key: key("a"), in: cache) {
      runs += 1
      return 7
    }
    for _ in 0..<20 { await Task.yield() }
    #expect(oneStates.values.isEmpty && twoStates.values.isEmpty)
    #expect(runs == 0)
    #expect(await storage.reads == 1)
    await storage.openReads()
    try await first.value(timeLimit: .seconds(30))
    try await second.value(timeLimit: .seconds(30))
    #expect(runs == 1)
    #expect(oneStates.values == [.loaded(5), .loaded(6)])  // the restored value is stale whatever the stale time
    // The second shows the restored value and joins the refetch, or shows the refetch's answer, fresh by then.
    #expect(twoStates.values == [.loaded(5), .loaded(6)] || twoStates.values == [.loaded(6)])
    #expect(await storage.reads == 1)
  }

  @Test func aRestoreNeverOverwritesAValueWrittenMeanwhile() async throws {
    let storage = MemoryStorage([name("a"): 5])
    await storage.holdReads()
    var cache: LoadCache? = LoadCache(staleTime: .seconds(100), storage: storage, clock: clock)
    let screen = Screen()
    let states = StateRecorder(screen.$number)
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache!) {
      Issue.record("the set value is fresh: nothing fetches")
      return 0
    }
    await storage.untilReadsHeld(1)
    cache!.set(9, for: key("a"))
    await storage.openReads()
    try await task.value(timeLimit: .seconds(30))
    #expect(states.values == [.loaded(9)])
    #expect(cache!.value(for: key("a")) == 9)
    #expect(await events(afterReleasing: &cache) == [])  // a superseded restore is not reported
    #expect(await storage.records[name("a")] as? Int == 9)
  }

  @Test func noRecordIsAnOrdinaryMiss() async throws {
    let storage = MemoryStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    let screen = Screen()
    let states = StateRecorder(screen.$number)
    await screen.$number.load(key("a"), in: cache) { 1 }
    #expect(states.values == [.loading, .loaded(1)])
  }

  @Test func anUnreadableRecordIsDroppedRemovedAndTheLoadGoesOnAsAMiss() async throws {
    let storage = MemoryStorage([name("a"): "not an Int", name("b"): 3])
    await storage.failReads(of: name("b"))
    var cache: LoadCache? = LoadCache(storage: storage, clock: clock)
    let screen = Screen()
    let states = StateRecorder(screen.$number)
    await screen.$number.load(key("a"), in: cache!) { 1 }
    await screen.$number.load(key("b"), in: cache!) { 2 }
    #expect(states.values == [.loading, .loaded(1), .loading, .loaded(2)])
    await cache!.flush()
    let log = await storage.log
    #expect(log.contains("remove \(name("a"))") && log.contains("remove \(name("b"))"))
    #expect(await events(afterReleasing: &cache) == ["dropped \(name("a"))", "dropped \(name("b"))"])
  }

  @Test func aPlainKeyEqualToAPersistedOneNeverReadsStorage() async throws {
    let storage = MemoryStorage([name("a"): 5])
    let cache = LoadCache(storage: storage, clock: clock)
    let screen = Screen()
    await screen.$number.load(CacheKey<Int>("a"), in: cache) { 1 }
    #expect(await storage.reads == 0)
    #expect(screen.number == .loaded(1))
    // Touched by a persisted key, the entry keeps its name: its next value is stored.
    await screen.$number.load(key("a"), in: cache) { 2 }
    await cache.flush()
    #expect(await storage.reads == 0)
    #expect(await storage.records[name("a")] as? Int == 2)
  }

  @Test func afterGarbageCollectionTheNextLoadReadsAgainAndAfterRemoveThereIsNone() async throws {
    let storage = MemoryStorage([name("a"): 5])
    let cache = LoadCache(gcTime: .seconds(10), storage: storage, clock: clock)
    let screen = Screen()
    await screen.$number.load(key("a"), in: cache) { 6 }
    screen.$number.cancel()
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(10))
    await cache.nextCollection()
    #expect(cache.count == 0)
    await cache.flush()
    let states = StateRecorder(screen.$number)
    await screen.$number.load(key("a"), in: cache) { 7 }
    #expect(await storage.reads == 2)
    #expect(states.values == [.loaded(6), .loaded(7)])
    cache.remove(key("a"))
    await cache.flush()
    #expect(await storage.records[name("a")] == nil)
    await screen.$number.load(key("a"), in: cache) { 8 }
    #expect(states.values == [.loaded(6), .loaded(7), .loading, .loaded(8)])
  }

  @Test func valueForFetchRestoresToo() async throws {
    let storage = MemoryStorage([name("a"): 5])
    let cache = LoadCache(storage: storage, clock: clock)
    let value = try await cache.value(for: key("a")) { 6 }
    #expect(value == 5)  // stale: returned, refreshed in the background
    #expect(await storage.reads == 1)
    #expect(cache.value(for: CacheKey<Int>("b").persisted()) == nil)  // the synchronous read reads memory only
    #expect(await storage.reads == 1)
  }

  @Test func everyFaceRestores() async throws {
    let storage = MemoryStorage([name("w"): 1, name("k"): 2, name("l"): 3])
    let cache = LoadCache(staleTime: .seconds(100), storage: storage, clock: clock)
    let screen = Screen()
    let other = Screen()
    await screen.$number.load(key("w"), in: cache) { 10 }
    await screen.load(\.plain, key: key("k"), in: cache) { 20 }
    await other.loadables.number.load(key("l"), in: cache) { 30 }
    // Restored values are stale whatever the stale time: each was shown, then refetched.
    #expect(screen.number == .loaded(10) && screen.plain == .loaded(20) && other.number == .loaded(30))
    #expect(await storage.reads == 3)
  }

  // MARK: Writes

  @Test func writesAreLeadingThenCoalescedPerSecondWithTheLastValue() async throws {
    let storage = MemoryStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))  // written at once
    cache.set(2, for: key("a"))
    cache.set(3, for: key("a"))  // the last value wins
    cache.set(10, for: key("b"))  // another key: its own interval
    try await clock.waitForCacheTimers(1)
    #expect(clock.sleeperCount == 0)
    clock.advance(by: .seconds(1))
    try await clock.waitForCacheTimers(0)
    await cache.flush()
    // Each name's writes are in order; two names are written independently (their leading writes race).
    let writes = await storage.writes
    #expect(writes.filter { $0.hasPrefix("write \(name("a")) ") } == ["write \(name("a")) 1", "write \(name("a")) 3"])
    #expect(writes.filter { $0.hasPrefix("write \(name("b")) ") } == ["write \(name("b")) 10"])
    #expect(writes.count == 3)
  }

  @Test func theWriterForgetsNamesOnceTheirIntervalIsOver() async throws {
    let storage = MemoryStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    for index in 0..<100 { cache.set(index, for: CacheKey<Int>("k", index).persisted()) }
    await cache.flush()
    #expect(cache.store.persistence?.recordCount == 100)  // each in its one-second interval
    clock.advance(by: .seconds(1))
    await cache.flush()  // waits for nothing that has ended, and forgets the idle names
    #expect(cache.store.persistence?.recordCount == 0)
    #expect(await storage.writes.count == 100)
  }

  @Test func flushPerformsPendingWritesNow() async throws {
    let storage = MemoryStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    cache.set(1, for: key("a"))
    cache.set(2, for: key("a"))
    await cache.flush()
    #expect(await storage.records[name("a")] as? Int == 2)
  }

  @Test func onlyFetchedOrSetValuesAreStored() async throws {
    struct Failure: Error {}
    let storage = MemoryStorage()
    let cache = LoadCache(storage: storage, clock: clock)
    let screen = Screen()
    await screen.$number.load(key("a"), in: cache) { 1 }
    await cache.flush()
    clock.advance(by: .seconds(5))
    let gate = Gate()
    let mutation = Task {
      try await cache.mutate(key("a"), optimistic: { $0 += 100 }) {
        await gate.wait()
        throw Failure()
      }
    }
    await gate.untilWaiting(1)
    #expect(screen.number == .loaded(101))
    cache.set(5, for: key("a"))  // stored as 5, shown as 105
    #expect(screen.number == .loaded(105))
    gate.open()
    await #expect(throws: Failure.self) { try await mutation.value(timeLimit: .seconds(30)) }
    await screen.$number.load(key("a"), in: cache) { throw Failure() }  // an error is not stored
    await cache.flush()
    let writes = await storage.writes
    // The fetch's 1, the set's 5 (its base, not what it showed), then what the end-of-mutation refetch fetched.
    #expect(writes.prefix(2) == ["write \(name("a")) 1", "write \(name("a")) 5"])
    #expect(!writes.contains { $0.hasSuffix(" 101") || $0.hasSuffix(" 105") })
    #expect(writes.count <= 3)
  }

  @Test func removeAllRemovesEveryRecordAndFailedWritesAreReported() async throws {
    let storage = MemoryStorage(["never read": 1])
    await storage.failWrites(of: name("bad"))
    var cache: LoadCache? = LoadCache(storage: storage, clock: clock)
    cache!.set(1, for: key("bad"))
    await cache!.flush()
    cache!.removeAll()
    await cache!.flush()
    #expect(await storage.records.isEmpty)
    #expect(await storage.log.last == "removeAll")
    #expect(await events(afterReleasing: &cache) == ["writeFailed \(name("bad"))"])
  }
}

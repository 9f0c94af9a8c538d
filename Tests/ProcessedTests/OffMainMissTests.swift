import Processed
import ProcessedTesting
import Testing

@testable import Processed

// `value(for:)` misses decided off the main actor (`CacheStore+OffMainFetches.swift`): each scenario runs on a cold cache,
// whose first miss goes to the main actor, and on a warmed one, whose misses of keys without an entry start or join
// their fetch where the caller runs. The outcomes must be the same — the rules of "Every face on any actor" — and the
// warmed runs check that the miss was decided off the main actor.

/// The fetch in flight for `key` decided off the main actor, not yet adopted by an entry (read without the main actor,
/// which would adopt it).
func offMainFetch(_ cache: LoadCache, _ key: CacheKey<Int>) -> OffMainFetch<Int>? {
  let published = PublishedKey(valueType: ObjectIdentifier(Int.self), parts: key.storage)
  return cache.store.published.withLock { $0.offMain[published] as? OffMainFetch<Int> }
}

/// A cache whose next misses are decided off the main actor (`warmed`), or one whose first miss goes there.
func omCache(warmed: Bool, staleTime: Duration = .seconds(3_600)) async throws -> LoadCache {
  let cache = LoadCache(staleTime: staleTime)
  if warmed {
    // One `value(for:)` publishes the cache's entries: from then on, a key without a row has no entry.
    #expect(try await Task.detached { try await cache.value(for: CacheKey<Int>("warm")) { 0 } }.ofValue() == 0)
  }
  return cache
}

/// Waits until `count` callers wait for `key`'s fetch: in the off-main table when `warmed` (and checks that the miss was
/// decided there), at the entry otherwise.
func omUntilCallers(
  _ cache: LoadCache, _ key: CacheKey<Int>, _ count: Int, warmed: Bool,
  sourceLocation: SourceLocation = #_sourceLocation
) async {
  if warmed {
    await ofUntil("\(count) callers wait off the main actor", sourceLocation: sourceLocation) {
      (offMainFetch(cache, key)?.waitingCount(in: cache.store) ?? 0) >= count
    }
    #expect(
      offMainFetch(cache, key) != nil, "the miss was not decided off the main actor", sourceLocation: sourceLocation)
  } else {
    await ofUntilWaiters(cache, key, count, sourceLocation: sourceLocation)
  }
}

/// Starts `count` callers of `key` in detached tasks.
func omCallers(
  _ count: Int, _ cache: LoadCache, _ key: CacheKey<Int>, fetch: @escaping @Sendable () async throws -> Int
) -> [Task<Int, any Error>] {
  (0..<count).map { _ in Task.detached { try await cache.value(for: key, fetch: fetch) } }
}

@Suite struct OffMainMissTests {
  @Test(arguments: [false, true])
  func sixtyFourCallersShareOneFetchAndTheValueIsKept(warmed: Bool) async throws {
    let cache = try await omCache(warmed: warmed)
    let key = CacheKey<Int>("om", "shared")
    let gate = ActorGate()
    let fetches = OFCounter()
    let callers = omCallers(64, cache, key) {
      _ = fetches.next()
      await gate.wait()
      return 42
    }
    await omUntilCallers(cache, key, 64, warmed: warmed)
    await gate.untilWaiting(1)
    gate.open()
    for caller in callers { #expect(try await caller.ofValue() == 42) }
    #expect(fetches.value == 1)
    #expect(await MainActor.run { cache.value(for: key) } == 42)
    #expect(await cache.count == (warmed ? 2 : 1))
    // Fresh: the next caller, and a state's load, fetch nothing.
    #expect(try await Task.detached { try await cache.value(for: key) { -1 } }.ofValue() == 42)
    let screen = await MainActor.run { CacheScreen() }
    await screen.$number.load(key, in: cache) { -1 }
    #expect(await screen.number == .loaded(42))
    #expect(fetches.value == 1)
  }

  /// A caller awaiting `value(for:)` from the main actor is decided where the function's body runs — off the main
  /// actor, since it is a nonisolated `async` function — like any other caller: main-actor callers and detached ones of
  /// one key share one fetch, decided in the off-main table, and all get its answer.
  @Test func mainActorCallersShareTheOffMainFetchWithOtherCallers() async throws {
    let cache = try await omCache(warmed: true)
    let key = CacheKey<Int>("om", "main and off")
    let gate = ActorGate()
    let fetches = OFCounter()
    let fetch: @Sendable () async throws -> Int = {
      _ = fetches.next()
      await gate.wait()
      return 9
    }
    let onMain = (0..<3).map { _ in
      Task { @MainActor in try await cache.value(for: key, fetch: fetch) }
    }
    let offMain = omCallers(3, cache, key, fetch: fetch)
    await omUntilCallers(cache, key, 6, warmed: true)
    await gate.untilWaiting(1)
    gate.open()
    for caller in onMain + offMain { #expect(try await caller.ofValue() == 9) }
    #expect(fetches.value == 1)
  }

  @Test(arguments: [false, true])
  func aSetDuringTheFetchEndsTheCallersAndIsNeverOverwritten(warmed: Bool) async throws {
    let cache = try await omCache(warmed: warmed)
    let key = CacheKey<Int>("om", "set")
    let gate = ActorGate()
    let ended = OFFlag()
    let callers = omCallers(3, cache, key) {
      await gate.wait()
      ended.set(true)
      return 1
    }
    await omUntilCallers(cache, key, 3, warmed: warmed)
    await MainActor.run { cache.set(7, for: key) }
    for caller in callers { #expect(try await caller.ofValue() == 7) }
    gate.open()
    await ofUntil("the fetch's block returned") { ended.value == true }
    await ofUntil("the entry's fetch ended") {
      await MainActor.run { cache.store.entry(for: key)?.isFetching == false }
    }
    #expect(await MainActor.run { cache.value(for: key) } == 7)
    #expect(try await Task.detached { try await cache.value(for: key) { -1 } }.ofValue() == 7)
  }

  @Test(arguments: [false, true])
  func anInvalidateDuringTheFetchRestartsItForTheCallers(warmed: Bool) async throws {
    let cache = try await omCache(warmed: warmed)
    let key = CacheKey<Int>("om", "invalidate")
    let gate = ActorGate()
    let fetches = OFCounter()
    let callers = omCallers(2, cache, key) {
      let number = fetches.next()
      if number == 1 { await gate.wait() }
      return number
    }
    await omUntilCallers(cache, key, 2, warmed: warmed)
    await gate.untilWaiting(1)
    await MainActor.run { cache.invalidate(key) }
    for caller in callers { #expect(try await caller.ofValue() == 2) }
    gate.open()
    await ofUntil("the first fetch ended") { await MainActor.run { cache.store.entry(for: key)?.isFetching == false } }
    #expect(await MainActor.run { cache.value(for: key) } == 2)
    #expect(fetches.value == 2)
  }

  @Test(arguments: [false, true], [false, true])
  func aRemoveDuringTheFetchLeavesTheCallersTheirOwnAnswerUnstored(warmed: Bool, all: Bool) async throws {
    let cache = try await omCache(warmed: warmed)
    let key = CacheKey<Int>("om", "remove")
    let gate = ActorGate()
    let callers = omCallers(2, cache, key) {
      await gate.wait()
      return 5
    }
    await omUntilCallers(cache, key, 2, warmed: warmed)
    await MainActor.run { all ? cache.removeAll() : cache.remove(key) }
    gate.open()
    for caller in callers { #expect(try await caller.ofValue() == 5) }
    #expect(await MainActor.run { cache.value(for: key) } == nil)
    #expect(await cache.count == (warmed && !all ? 1 : 0))
  }

  @Test(arguments: [false, true])
  func anActorOwnedStateJoinsTheCallersFetch(warmed: Bool) async throws {
    let cache = try await omCache(warmed: warmed)
    let key = CacheKey<Int>("om", "actor-state")
    let gate = ActorGate()
    let caller = omCallers(1, cache, key) {
      await gate.wait()
      return 4
    }[0]
    await omUntilCallers(cache, key, 1, warmed: warmed)
    let owner = OFOwner()
    await owner.observe()
    let stateRuns = OFCounter()
    let task = await owner.start(key, in: cache) {
      _ = stateRuns.next()
      return -1
    }
    await ofUntilBound(cache, key)
    gate.open()
    #expect(try await caller.ofValue() == 4)
    try await task.ofValue()
    #expect(stateRuns.value == 0)
    #expect(await owner.history == [.loading, .loaded(4)])
    #expect(await owner.offExecutor == 0)
  }

  @Test(arguments: [false, true])
  func aMainActorStateJoinsTheCallersFetch(warmed: Bool) async throws {
    let cache = try await omCache(warmed: warmed)
    let key = CacheKey<Int>("om", "main-state")
    let gate = ActorGate()
    let caller = omCallers(1, cache, key) {
      await gate.wait()
      return 4
    }[0]
    await omUntilCallers(cache, key, 1, warmed: warmed)
    let (screen, recorder) = await MainActor.run {
      let screen = CacheScreen()
      return (screen, StateRecorder(screen.$number))
    }
    let stateRuns = OFCounter()
    let load = await MainActor.run {
      screen.$number.load(key, in: cache) {
        _ = stateRuns.next()
        return -1
      }
    }
    gate.open()
    #expect(try await caller.ofValue() == 4)
    try await load.ofValue()
    #expect(stateRuns.value == 0)
    #expect(await MainActor.run { recorder.values } == [.loading, .loaded(4)])
  }

  @Test(arguments: [false, true])
  func aCancelledCallerEndsAtOnceAndTheFetchGoesOnForTheOthers(warmed: Bool) async throws {
    let cache = try await omCache(warmed: warmed)
    let key = CacheKey<Int>("om", "cancel-one")
    let gate = ActorGate()
    let sawCancellation = OFFlag()
    let callers = omCallers(3, cache, key) {
      await gate.wait()
      sawCancellation.set(Task.isCancelled)
      return 9
    }
    await omUntilCallers(cache, key, 3, warmed: warmed)
    callers[0].cancel()
    await #expect(throws: CancellationError.self) { try await callers[0].ofValue() }
    gate.open()
    #expect(try await callers[1].ofValue() == 9)
    #expect(try await callers[2].ofValue() == 9)
    #expect(sawCancellation.value == false)
    #expect(await MainActor.run { cache.value(for: key) } == 9)
  }

  @Test(arguments: [false, true])
  func whenEveryCallerIsCancelledTheFetchIsCancelledAndNothingKept(warmed: Bool) async throws {
    let cache = try await omCache(warmed: warmed)
    let key = CacheKey<Int>("om", "cancel-all")
    let gate = ActorGate()
    let sawCancellation = OFFlag()
    let callers = omCallers(2, cache, key) {
      await gate.wait()
      sawCancellation.set(Task.isCancelled)
      return 9
    }
    await omUntilCallers(cache, key, 2, warmed: warmed)
    for caller in callers { caller.cancel() }
    for caller in callers { await #expect(throws: CancellationError.self) { try await caller.ofValue() } }
    // The last caller's cancellation reaches the fetch (on the main actor for an entry's fetch).
    if warmed {
      await ofUntil("the fetch left the table") { offMainFetch(cache, key) == nil }
    } else {
      await ofUntil("the fetch was cancelled") {
        await MainActor.run { cache.store.entry(for: key)?.isFetching != true }
      }
    }
    gate.open()
    await ofUntil("the block returned") { sawCancellation.value != nil }
    #expect(sawCancellation.value == true)
    #expect(await MainActor.run { cache.value(for: key) } == nil)
  }

  @Test(arguments: [false, true])
  func anErrorReachesEveryCallerAndTheNextCallFetchesAgain(warmed: Bool) async throws {
    let cache = try await omCache(warmed: warmed)
    let key = CacheKey<Int>("om", "error")
    let gate = ActorGate()
    let fetches = OFCounter()
    let callers = omCallers(3, cache, key) {
      _ = fetches.next()
      await gate.wait()
      throw OFFailure()
    }
    await omUntilCallers(cache, key, 3, warmed: warmed)
    gate.open()
    for caller in callers { await #expect(throws: OFFailure.self) { try await caller.ofValue() } }
    #expect(fetches.value == 1)
    #expect(try await Task.detached { try await cache.value(for: key) { 8 } }.ofValue() == 8)
    #expect(await MainActor.run { cache.value(for: key) } == 8)
  }

  @Test(arguments: [false, true])
  func aFetchThatThrowsCancellationErrorEndsItsCallersCancelled(warmed: Bool) async throws {
    let cache = try await omCache(warmed: warmed)
    let key = CacheKey<Int>("om", "throws-cancellation")
    let gate = ActorGate()
    let callers = omCallers(2, cache, key) {
      await gate.wait()
      throw CancellationError()
    }
    await omUntilCallers(cache, key, 2, warmed: warmed)
    gate.open()
    for caller in callers { await #expect(throws: CancellationError.self) { try await caller.ofValue() } }
    #expect(await MainActor.run { cache.value(for: key) } == nil)
  }

  /// An actor-owned state's load of a key whose value a miss off the main actor fetched, before the main actor took
  /// it: a fresh hit, written once, with nothing fetched.
  @Test func anActorOwnedStateShowsAValueFetchedOffTheMainActor() async throws {
    let cache = try await omCache(warmed: true)
    let key = CacheKey<Int>("om", "landed-actor")
    #expect(try await Task.detached { try await cache.value(for: key) { 5 } }.ofValue() == 5)
    let owner = OFOwner()
    await owner.observe()
    let stateRuns = OFCounter()
    try await owner.start(key, in: cache) {
      _ = stateRuns.next()
      return -1
    }.ofValue()
    #expect(stateRuns.value == 0)
    #expect(await owner.history == [.loaded(5)])
    #expect(await owner.offExecutor == 0)
  }

  /// `invalidate(prefix:)` reaches a value fetched off the main actor that no main-actor call has taken yet: the next
  /// call returns it stale and refreshes it.
  @Test func invalidatePrefixReachesAValueFetchedOffTheMainActor() async throws {
    let cache = try await omCache(warmed: true)
    let key = CacheKey<Int>("om", "landed-prefix")
    #expect(try await Task.detached { try await cache.value(for: key) { 1 } }.ofValue() == 1)
    await MainActor.run { cache.invalidate(prefix: "om") }
    #expect(try await Task.detached { try await cache.value(for: key) { 2 } }.ofValue() == 1)
    await ofUntil("the refresh wrote 2") { await MainActor.run { cache.value(for: key) } == 2 }
    #expect(try await Task.detached { try await cache.value(for: key) { 3 } }.ofValue() == 2)
  }

  /// An outcome the main actor never asked for is dropped `gcTime` after its fetch ended, as an entry with no state
  /// would be, and not before.
  @Test func anOutcomeNoMainActorCallTookIsDroppedAfterGCTime() async throws {
    let clock = TestClock()
    let cache = LoadCache(staleTime: .seconds(3_600), gcTime: .seconds(10), clock: clock)
    #expect(try await Task.detached { try await cache.value(for: CacheKey<Int>("warm")) { 0 } }.ofValue() == 0)
    let key = CacheKey<Int>("om", "swept")
    #expect(try await Task.detached { try await cache.value(for: key) { 3 } }.ofValue() == 3)
    func held() -> Bool {
      let published = PublishedKey(valueType: ObjectIdentifier(Int.self), parts: key.storage)
      return cache.store.published.withLock { ($0.offMain[published] as? OffMainFetch<Int>)?.endedAt != nil }
    }
    #expect(held())
    clock.advance(by: .seconds(9))
    for _ in 0..<100 { await Task.yield() }
    #expect(held())
    #expect(cache.store.publishedValue(for: key, staleTime: .seconds(3_600))?.value == 3)
    await ofUntil("the outcome was dropped") {
      clock.advance(by: .seconds(1))
      return !held()
    }
    #expect(cache.store.publishedValue(for: key, staleTime: .seconds(3_600)) == nil)
    #expect(await MainActor.run { cache.value(for: key) } == nil)
    // The warming entry went too, on the main actor's collector: nothing is left.
    await ofUntil("the warming entry was collected") { await cache.count == 0 }
  }

  /// 64 tasks × 200 calls over 16 keys, on a warmed cache: exactly 16 fetches, every answer the key's own.
  @Test func sixtyFourTasksOverSixteenKeysRunSixteenFetches() async throws {
    let cache = try await omCache(warmed: true)
    let fetches = OFCounter()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<64 {
        group.addTask {
          for call in 0..<200 {
            let id = (task + call) % 16
            let value = try await cache.value(for: CacheKey<Int>("om", "many", id)) {
              _ = fetches.next()
              return id * 100
            }
            #expect(value == id * 100)
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(fetches.value == 16)
    #expect(await cache.count == 17)
  }

  /// Tasks mix misses, `set`, `invalidate`, `remove` and reads over four keys on a warmed cache; every answer is one that
  /// was fetched or set for that key (`key * 1_000 + n`), never another key's, and once they are done the cache reads
  /// the same on the main actor and off it.
  @Test func randomCallsFromManyTasksKeepEachKeysAnswersItsOwn() async throws {
    let cache = try await omCache(warmed: true, staleTime: .zero)
    let fetches = OFCounter()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<16 {
        group.addTask {
          var generator = MBRandom(seed: UInt64(task) + 1)
          for _ in 0..<150 {
            let id = Int(generator.next() % 4)
            let key = CacheKey<Int>("om", "random", id)
            switch generator.next() % 8 {
            case 0: cache.set(id * 1_000 + 999, for: key)
            case 1: cache.invalidate(key)
            case 2: cache.remove(key)
            case 3:
              if let value = await cache.value(for: key) { #expect(value / 1_000 == id) }
            default:
              let value = try await cache.value(for: key) {
                await Task.yield()
                return id * 1_000 + fetches.next() % 999
              }
              #expect(value / 1_000 == id)
            }
          }
        }
      }
      try await group.waitForAll()
    }
    // Stale hits' refreshes may still run: once every fetch has ended, the published rows (what a read off the main
    // actor sees) show exactly the entries' values.
    let keys = (0..<4).map { CacheKey<Int>("om", "random", $0) }
    await ofUntil("every fetch ended") {
      await MainActor.run { keys.allSatisfy { cache.store.entry(for: $0)?.isFetching != true } }
    }
    for (id, key) in keys.enumerated() {
      let onMain = await MainActor.run { cache.value(for: key) }
      let published = cache.store.publishedValue(for: key, staleTime: .seconds(3_600))?.value
      #expect(published == onMain)
      if let onMain { #expect(onMain / 1_000 == id) }
    }
  }

  /// The main actor looked a key up and found no entry; before it inserts the one it makes, a miss of the key is decided
  /// off the main actor (the key had no row yet). The new entry takes the miss over — its fetch in flight (`ended`
  /// false) or its outcome — so one fetch runs, the caller gets its answer, and no second entry replaces this one.
  @Test(arguments: [false, true])
  func anEntryInsertedAfterAMissWasDecidedOffTheMainActorTakesItOver(ended: Bool) async throws {
    let cache = try await omCache(warmed: true)
    let key = CacheKey<Int>("om", "inserted")
    let gate = ActorGate()
    let fetches = OFCounter()
    let caller = Task.detached {
      try await cache.value(for: key) {
        _ = fetches.next()
        await gate.wait()
        return 5
      }
    }
    await ofUntil("the miss was decided off the main actor") { offMainFetch(cache, key) != nil }
    await gate.untilWaiting(1)
    if ended {
      gate.open()
      #expect(try await caller.ofValue() == 5)
    }
    let entry = await MainActor.run {
      // What `makeEntry(for:)` does after a lookup that found nothing.
      let entry = CacheEntry<Int>(key: cache.store.erased(key), store: cache.store)
      cache.store.insert(entry)
      #expect(offMainFetch(cache, key) == nil)
      #expect(entry.isFetching == !ended)
      return entry
    }
    if !ended {
      gate.open()
      #expect(try await caller.ofValue() == 5)
    }
    await MainActor.run {
      #expect(cache.store.entry(for: key) === entry)
      #expect(cache.value(for: key) == 5)
    }
    #expect(cache.store.publishedValue(for: key, staleTime: .seconds(3_600))?.value == 5)
    #expect(fetches.value == 1)
  }

  /// With a `gcTime` of zero, an outcome nobody uses goes at once: a miss decided off the main actor gives its callers
  /// the fetch's answer and keeps nothing, so the next call fetches again and the cache holds no entry of the key.
  @Test func withAGCTimeOfZeroAMissOffTheMainActorKeepsNothing() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600), gcTime: .zero)
    #expect(try await Task.detached { try await cache.value(for: CacheKey<Int>("warm")) { 0 } }.ofValue() == 0)
    let key = CacheKey<Int>("om", "gc zero")
    let fetches = OFCounter()
    for round in 1...3 {
      let answer = try await Task.detached {
        try await cache.value(for: key) { fetches.next() * 10 }
      }.ofValue()
      #expect(answer == round * 10)
      #expect(offMainFetch(cache, key) == nil)
      #expect(cache.store.publishedValue(for: key, staleTime: .seconds(3_600)) == nil)
    }
    #expect(fetches.value == 3)
    await MainActor.run { #expect(cache.value(for: key) == nil) }
  }

  /// Offline, a miss off the main actor of a warmed cache is not fetched there: it goes to the main actor, whose entry
  /// waits for the network (its fetch paused, nothing run) and fetches once the network is back. With
  /// `networkMode: .always` the miss is decided off the main actor at once, offline too.
  @Test func offlineAMissOffTheMainActorWaitsForTheNetworkUnlessItsModeIsAlways() async throws {
    let cache = try await omCache(warmed: true)
    cache.setOnline(false)
    let fetches = OFCounter()
    let key = CacheKey<Int>("om", "offline")
    let caller = Task.detached { try await cache.value(for: key) { fetches.next() * 10 } }
    await ofUntil("the miss waits for the network at its entry") {
      await MainActor.run { cache.store.entry(for: key)?.isPaused == true }
    }
    #expect(offMainFetch(cache, key) == nil)
    #expect(fetches.value == 0)
    let always = CacheKey<Int>("om", "offline, always")
    let answer = try await Task.detached {
      try await cache.value(for: always, options: LoadOptions(networkMode: .always)) { fetches.next() * 10 }
    }.ofValue()
    #expect(answer == 10)
    #expect(offMainFetch(cache, always)?.endedAt != nil, "the miss was not decided off the main actor")
    cache.setOnline(true)
    #expect(try await caller.ofValue() == 20)
    #expect(fetches.value == 2)
  }
}

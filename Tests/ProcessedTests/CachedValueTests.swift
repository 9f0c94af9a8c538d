import ProcessedTesting
import Testing

@testable import Processed

/// `LoadCache.value(for:options:fetch:)`: a value without a state, from any isolation (spec, "Every face on any
/// actor": "A value without a state").
@MainActor
@Suite struct CachedValueTests {
  /// Counts fetches per key, from any thread; each fetch may wait at an `ActorGate`.
  final class Backend: Sendable {
    private let counts = LockedBox([String: Int]())
    let gate: ActorGate?

    init(gate: ActorGate? = nil) { self.gate = gate }

    func fetch(_ name: String) async throws -> Int {
      let count = counts.withLock { counts -> Int in
        counts[name, default: 0] += 1
        return counts[name]!
      }
      if let gate { await gate.wait() }
      try Task.checkCancellation()
      return count
    }

    func fetches(_ name: String) -> Int { counts.withLock { $0[name, default: 0] } }
  }

  struct Failure: Error, Equatable {}

  @Test func manyConcurrentCallersRunOneFetchPerKey() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let backend = Backend()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<64 {
        group.addTask {
          for call in 0..<1_000 {
            let key = (task + call) % 16
            let value = try await cache.value(for: CacheKey<Int>("user", key)) { try await backend.fetch("\(key)") }
            #expect(value == 1)
          }
        }
      }
      try await group.waitForAll()
    }
    for key in 0..<16 { #expect(backend.fetches("\(key)") == 1) }
  }

  @Test func freshReturnsWithoutFetchingAndStaleRefreshesInTheBackground() async throws {
    let clock = TestClock()
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    let backend = Backend()
    let key = CacheKey<Int>("a")
    #expect(try await cache.value(for: key) { try await backend.fetch("a") } == 1)
    #expect(try await cache.value(for: key) { try await backend.fetch("a") } == 1)
    #expect(backend.fetches("a") == 1)
    clock.advance(by: .seconds(10))
    #expect(try await cache.value(for: key) { try await backend.fetch("a") } == 1)  // stale: at once
    #expect(try await cache.value(for: key) { try await backend.fetch("a") } <= 2)  // joins the refresh
    try await until { cache.value(for: key) == 2 }
    #expect(backend.fetches("a") == 2)
  }

  @Test func joinedCallersShareAnErrorThatIsNotKept() async throws {
    let cache = LoadCache()
    let gate = ActorGate()
    let key = CacheKey<Int>("a")
    let runs = LockedBox(0)
    let fetch: @Sendable () async throws -> Int = {
      runs.withLock { $0 += 1 }
      await gate.wait()
      throw Failure()
    }
    let first = Task { try await cache.value(for: key, fetch: fetch) }
    await gate.untilWaiting(1)
    let second = Task { try await cache.value(for: key, fetch: fetch) }
    try await until { cache.store.entry(for: key)?.callers?.waiterCount == 2 }
    gate.open()
    await #expect(throws: Failure.self) { try await first.value(timeLimit: .seconds(30)) }
    await #expect(throws: Failure.self) { try await second.value(timeLimit: .seconds(30)) }
    #expect(runs.withLock { $0 } == 1)
    #expect(try await cache.value(for: key) { 7 } == 7)  // the error was not a value: a new fetch
  }

  @Test func cancellingOneCallerEndsItAtOnceAndTheFetchGoesOn() async throws {
    let cache = LoadCache()
    let backend = Backend(gate: ActorGate())
    let key = CacheKey<Int>("a")
    let callers = (0..<64).map { _ in Task { try await cache.value(for: key) { try await backend.fetch("a") } } }
    try await until { cache.store.entry(for: key)?.callers?.waiterCount == 64 }
    callers[0].cancel()
    await #expect(throws: CancellationError.self) { try await callers[0].value }  // while the fetch is parked
    backend.gate?.open()
    for caller in callers.dropFirst() { #expect(try await caller.value(timeLimit: .seconds(30)) == 1) }
    #expect(backend.fetches("a") == 1)
  }

  @Test func cancellingEveryCallerCancelsTheFetchAndKeepsTheEntry() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("a")
    cache.set(1, for: key)
    cache.invalidate(key)  // stale, nobody bound: a call returns 1 and refreshes; a miss needs no value
    let missKey = CacheKey<Int>("b")
    let gate = ActorGate()
    let sawCancellation = LockedBox(false)
    let caller = Task {
      try await cache.value(for: missKey) {
        await gate.wait()
        sawCancellation.withLock { $0 = Task.isCancelled }
        return 5
      }
    }
    await gate.untilWaiting(1)
    caller.cancel()
    await #expect(throws: CancellationError.self) { try await caller.value(timeLimit: .seconds(30)) }
    try await until { cache.store.entry(for: missKey)?.isFetching != true }
    gate.open()
    try await until { sawCancellation.withLock { $0 } }
    #expect(cache.value(for: missKey) == nil)
  }

  @Test func aSetDuringTheFetchIsWhatTheCallersGet() async throws {
    let cache = LoadCache()
    let backend = Backend(gate: ActorGate())
    let key = CacheKey<Int>("a")
    let caller = Task { try await cache.value(for: key) { try await backend.fetch("a") } }
    await backend.gate?.untilWaiting(1)
    cache.set(42, for: key)
    #expect(try await caller.value(timeLimit: .seconds(30)) == 42)
    backend.gate?.open()
    #expect(cache.value(for: key) == 42)  // the older answer never writes
  }

  @Test func anInvalidationRestartsTheCallersFetch() async throws {
    let cache = LoadCache()
    let gate = ActorGate()
    let runs = LockedBox(0)
    let key = CacheKey<Int>("a")
    let caller = Task {
      try await cache.value(for: key) {
        let run = runs.withLock { runs -> Int in
          runs += 1
          return runs
        }
        if run == 1 { await gate.wait() }
        return run
      }
    }
    await gate.untilWaiting(1)
    cache.invalidate(key)
    #expect(try await caller.value(timeLimit: .seconds(30)) == 2)
    gate.open()
    #expect(cache.value(for: key) == 2)
  }

  @Test func afterRemoveTheCallerGetsItsOwnAnswerWhichIsNotStored() async throws {
    let cache = LoadCache()
    let backend = Backend(gate: ActorGate())
    let key = CacheKey<Int>("a")
    let caller = Task { try await cache.value(for: key) { try await backend.fetch("a") } }
    await backend.gate?.untilWaiting(1)
    cache.remove(key)
    backend.gate?.open()
    #expect(try await caller.value(timeLimit: .seconds(30)) == 1)
    #expect(cache.value(for: key) == nil)
    #expect(backend.fetches("a") == 1)
  }

  /// A screen's fetch throws `ResetLoadable` while a caller waits for it: the screen is reset, and the caller, which has
  /// no state to reset, ends with `CancellationError` (it never waits forever).
  @Test func aCallerOfAFetchThatAskedForAResetEndsCancelled() async throws {
    let cache = LoadCache()
    let screen = CachedValueScreen()
    let gate = Gate()
    let key = CacheKey<Int>("a")
    let load: Task<Void, Never> = screen.$number.load(key, in: cache) {
      await gate.wait()
      throw ResetLoadable()
    }
    await gate.untilWaiting(1)
    let caller = Task { try await cache.value(for: key) { -1 } }
    try await until { cache.store.entry(for: key)?.callers?.waiterCount == 1 }
    gate.open()
    await #expect(throws: CancellationError.self) { try await caller.value(timeLimit: .seconds(30)) }
    try await load.value(timeLimit: .seconds(30))
    #expect(screen.number == .absent)
    #expect(cache.value(for: key) == nil)
  }

  @Test func aCallerJoinsAScreensFetch() async throws {
    let cache = LoadCache()
    let screen = CachedValueScreen()
    let gate = Gate()
    let key = CacheKey<Int>("a")
    let load: Task<Void, Never> = screen.$number.load(key, in: cache) {
      await gate.wait()
      return 3
    }
    await gate.untilWaiting(1)
    let caller = Task {
      try await cache.value(for: key) {
        Issue.record("joined: never runs"); return 0
      }
    }
    try await until { cache.store.entry(for: key)?.callers?.waiterCount == 1 }
    gate.open()
    #expect(try await caller.value(timeLimit: .seconds(30)) == 3)
    try await load.value(timeLimit: .seconds(30))
    #expect(screen.number == .loaded(3))
  }

  // MARK: Fresh hits off the main actor

  /// `value(for:)` from a task off the main actor, while the main actor is blocked: only a hit that needs no hop returns.
  static func readWhileTheMainActorIsBlocked(_ cache: LoadCache, _ key: CacheKey<Int>) async -> Int? {
    await readWhileTheMainActorIsBlocked(cache, [key])[0]
  }

  /// `keys`' values, read one after the other by one task off the main actor while the calling (main) thread is
  /// blocked: a read that needs the main actor cannot return meanwhile, and gives `nil`. One block for all the keys,
  /// so that a busy machine, where the task may wait its turn, blocks the main thread once, not once per key.
  ///
  /// The reading task starts at once rather than waiting, on a blocked thread, for the main thread to block: with two
  /// such waits at once the main actor was seen to never run again on Linux (both threads of the pool blocked).
  static func readWhileTheMainActorIsBlocked(_ cache: LoadCache, _ keys: [CacheKey<Int>]) async -> [Int?] {
    let result = LockedBox<(done: Bool, values: [Int?])>((false, []))
    let point = WaitPoint()
    Task.detached {
      var values: [Int?] = []
      for key in keys { values.append(try? await cache.value(for: key) { -1 }) }
      result.withLock { $0 = (true, values) }
      point.wakeAll()
    }
    // Blocks for up to 5 s.
    let deadline = ContinuousClock.now + .seconds(5)
    point.wait(while: { !result.withLock { $0.done } && ContinuousClock.now < deadline })
    let values = result.withLock { $0.values }
    return values.count == keys.count ? values : Array(repeating: nil, count: keys.count)
  }

  @Test func aFreshHitOfAKeyReadBeforeNeedsNoHop() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("user", 1)
    #expect(try await cache.value(for: key) { 7 } == 7)  // read once: published
    #expect(await Self.readWhileTheMainActorIsBlocked(cache, key) == 7)
  }

  @Test func aMissOfAKeyWithoutAnEntryNeedsNoHopOnceTheCacheWasRead() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    #expect(try await cache.value(for: CacheKey<Int>("warm")) { 0 } == 0)  // read once: every entry is published
    // Fetched (-1) and returned while the main thread is blocked.
    let keys = (1...20).map { CacheKey<Int>("user", $0) }
    #expect(await Self.readWhileTheMainActorIsBlocked(cache, keys) == Array(repeating: -1, count: 20))
    // The values are kept, as entries, once the main actor asks.
    #expect(cache.value(for: CacheKey<Int>("user", 3)) == -1)
    #expect(cache.count == 21)
  }

  @Test func aStaleHitOfAKeyReadBeforeNeedsNoHopAndRefreshesOnceTheMainActorRuns() async throws {
    let cache = LoadCache(staleTime: .zero)  // every value is stale as soon as it is written
    let key = CacheKey<Int>("user", 1)
    #expect(try await cache.value(for: key) { 7 } == 7)  // a miss; read once: published
    #expect(await Self.readWhileTheMainActorIsBlocked(cache, key) == 7)  // stale: returned, its refresh (-1) queued
    #expect(cache.value(for: key) == -1 || cache.store.entry(for: key)?.isFetching == true)
    try await until { cache.value(for: key) == -1 }
  }

  @Test func offTheMainActorAReadSeesEveryChangeMadeBeforeIt() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("user", 1)
    func read(_ fetched: Int) async throws -> Int {
      try await Task.detached { try await cache.value(for: key) { fetched } }.value(timeLimit: .seconds(30))
    }
    #expect(try await read(1) == 1)
    cache.set(2, for: key)
    #expect(try await read(-1) == 2)
    let shown = try await cache.mutate(key, optimistic: { $0 += 10 }) { try await read(-1) }
    #expect(shown == 12)  // the shown value, as on the main actor
    for _ in 0..<100 where cache.value(for: key) == 12 { await Task.yield() }  // the end-of-mutation refetch
    cache.remove(key)
    #expect(try await read(3) == 3)  // removed: a miss, fetched
    cache.invalidate(key)
    #expect(try await read(4) == 3)  // invalidated: stale, returned and refreshed in the background
    cache.removeAll()
    #expect(try await read(5) == 5)
  }

  /// Many tasks read with `value(for:)` while others `set`, `invalidate` and `remove` the same keys: every read returns a
  /// value that was written to its key (by a `set` or a fetch), and once the writers are done each key reads its last
  /// write (run under the thread sanitizer by CI).
  @Test func readersAndWritersFromManyTasksStayConsistent() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let keys = (0..<8).map { CacheKey<Int>("item", $0) }
    // A fetch answers -(key + 1); a set writes key * 1,000 + n.
    let readers = (0..<32).map { reader in
      Task.detached {
        var seen: [(index: Int, value: Int)] = []
        for call in 0..<200 {
          let index = (reader + call) % keys.count
          seen.append((index, try await cache.value(for: keys[index]) { -(index + 1) }))
        }
        return seen
      }
    }
    let writers = (0..<4).map { writer in
      Task.detached {
        for step in 0..<100 {
          let index = (writer * 3 + step) % keys.count
          let key = keys[index]
          switch step % 5 {
          case 0: await MainActor.run { cache.invalidate(key) }
          case 1: await MainActor.run { cache.remove(key) }
          default: await MainActor.run { cache.set(index * 1_000 + step, for: key) }
          }
        }
      }
    }
    for writer in writers { try await writer.value(timeLimit: .seconds(60)) }
    for reader in readers {
      for (index, value) in try await reader.value(timeLimit: .seconds(60)) {
        // Its own key's fetch answer, or a value set to its own key.
        #expect(value == -(index + 1) || (value / 1_000 == index && value % 1_000 < 100))
      }
    }
    for (index, key) in keys.enumerated() {
      cache.set(index * 1_000 + 999, for: key)
      let read = try await Task.detached { try await cache.value(for: key) { -1 } }.value(timeLimit: .seconds(30))
      #expect(read == index * 1_000 + 999)
    }
  }

  /// Polls `condition` (yielding) until it holds; fails after a safety limit of yields.
  func until(_ condition: () async -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    for _ in 0..<100_000 {
      if await condition() { return }
      await Task.yield()
    }
    Issue.record("the condition never held", sourceLocation: sourceLocation)
  }
}

extension CallerFetch {
  var waiterCount: Int { waitingCount }
}

@MainActor
private final class CachedValueScreen {
  @Loadable var number: LoadableState<Int>
}

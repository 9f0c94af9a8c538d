import Processed
import ProcessedTesting
import Testing

// Outsider tests of `LoadCache.value(for:options:fetch:)` called off the main actor (detached tasks), mixed with
// main-actor calls of the same cache, written from the public doc comments, the services article and SPEC.md
// ("Every face on any actor") only. Every scenario runs on a cold cache and on one already read off the main actor
// (`warmed`), whose misses take another path: the outcomes must be the same.

// MARK: - Helpers

/// A cache whose misses are decided off the main actor once `warmed` (it was read off the main actor once).
func ooCache(
  warmed: Bool, staleTime: Duration = .seconds(3_600), gcTime: Duration = .seconds(300), clock: TestClock? = nil
) async throws -> LoadCache {
  let cache =
    if let clock {
      LoadCache(staleTime: staleTime, gcTime: gcTime, clock: clock)
    } else {
      LoadCache(staleTime: staleTime, gcTime: gcTime)
    }
  if warmed {
    _ = try await Task.detached { try await cache.value(for: CacheKey<Int>("warm")) { 0 } }.ofValue()
  }
  return cache
}

/// Starts a caller of `key` in a detached task; `started` counts the callers that are about to call.
func ooCaller(
  _ cache: LoadCache, _ key: CacheKey<Int>, started: OFCounter? = nil,
  fetch: @escaping @Sendable () async throws -> Int
) -> Task<Int, any Error> {
  Task.detached {
    _ = started?.next()
    return try await cache.value(for: key, fetch: fetch)
  }
}

/// Waits until `count` callers are about to call, then lets them run on (best effort: the public API does not tell
/// when a caller has joined a fetch, so the assertions of the tests hold whether a caller joined or came later).
func ooLetCallersJoin(_ started: OFCounter, _ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
  await ofUntil("\(count) callers started", sourceLocation: sourceLocation) { started.value >= count }
  for _ in 0..<200 { await Task.yield() }
}

/// Polls `condition`, yielding between checks, for at most `limit` of real time (a hang detector): whether it held.
func ooHolds(within limit: Duration, _ condition: () async -> Bool) async -> Bool {
  let end = ContinuousClock.now + limit
  while ContinuousClock.now < end {
    if await condition() { return true }
    await Task.yield()
  }
  return false
}

/// Waits until `count` fetches wait at `gate`.
func ooUntilAtGate(_ gate: ActorGate, _ count: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
  await ofUntil("\(count) at the gate", sourceLocation: sourceLocation) { gate.waiting >= count }
}

/// How a task ended: its value, or the type of its error.
enum OOOutcome<V: Equatable & Sendable>: Equatable, Sendable, CustomStringConvertible {
  case value(V)
  case cancelled
  case failure
  case other(String)

  var description: String {
    switch self {
    case .value(let v): ".value(\(v))"
    case .cancelled: ".cancelled"
    case .failure: ".failure"
    case .other(let text): ".other(\(text))"
    }
  }
}

/// The outcome of `task`, with the 300 s hang limit of `ofValue()`.
func ooOutcome<V: Equatable & Sendable>(of task: Task<V, any Error>) async -> OOOutcome<V> {
  do {
    return .value(try await task.ofValue())
  } catch is CancellationError {
    return .cancelled
  } catch is OFFailure {
    return .failure
  } catch {
    return .other("\(error)")
  }
}

/// A log of values, appended from any thread.
final class OOLog: Sendable {
  private let box = LockedBox<[Int]>([])
  func append(_ value: Int) { box.withLock { $0.append(value) } }
  var values: [Int] { box.withLock { $0 } }
}

/// What the reference model knows of one key's entry.
struct OOModelEntry {
  /// The values the entry may hold now (one, unless an invalidate may have come after a refresh landed).
  var values: Set<Int>
  /// When its value was written (on the test clock); meaningful when `pending` is empty.
  var writtenAt: Duration
  var invalidated: Bool
  /// The answer of the background refresh in flight (at most one: a stale hit while it runs joins it).
  var pending: Set<Int> = []
}

/// What a model run saw.
struct OOModelReport: Sendable {
  var mismatches: [String] = []
  var misses = 0
  var freshHits = 0
  var staleHits = 0
  var sets = 0
  var invalidations = 0
  var removals = 0
  var advances = 0
}

/// The reference model of the docs, driven from one detached task against `cache`.
struct OOModelRun {
  let cache: LoadCache
  let clock: TestClock
  let staleTime: Duration
  var warmPresent: Bool
  /// A seeded generator, so a failing sequence can be replayed.
  var random: MBRandom
  let log = OOLog()

  var now: Duration = .zero
  var entries: [Int: OOModelEntry] = [:]
  /// Fetches that must have run, and fetches that may have run (refreshes superseded before or after they started).
  var certainFetches: Set<Int> = []
  var maybeFetches: Set<Int> = []
  var report = OOModelReport()

  static let keyCount = 4
  static func key(_ index: Int) -> CacheKey<Int> { CacheKey<Int>("oo", index) }

  mutating func fail(_ step: Int, _ text: String) {
    report.mismatches.append("step \(step): \(text)")
  }

  mutating func run(steps: Int) async {
    for step in 0..<steps {
      let index = Int(random.next() % UInt64(Self.keyCount))
      let roll = Int(random.next() % 100)
      switch roll {
      case 0..<45: await call(step, index)
      case 45..<57: set(step, index)
      case 57..<65: invalidate(step, index)
      case 65..<69: invalidatePrefix(step, index)
      case 69..<77: remove(step, index)
      case 77..<80: removeAll(step)
      case 80..<92: await advance(step)
      default: await settle(step, index)
      }
      await readBack(step)
      if report.mismatches.count > 20 { return }
    }
    for index in 0..<Self.keyCount { await settle(steps, index) }
    await readBack(steps)
    // Fresh hits run nothing; a stale hit while a refresh runs joins it; misses and refreshes run their fetch once.
    let ran = log.values
    if Set(ran).count != ran.count { fail(steps, "a fetch ran twice: \(ran)") }
    let missing = certainFetches.subtracting(ran)
    if !missing.isEmpty { fail(steps, "fetches that must have run did not: \(missing.sorted())") }
    let extra = Set(ran).subtracting(certainFetches).subtracting(maybeFetches)
    if !extra.isEmpty { fail(steps, "fetches that must not have run did: \(extra.sorted())") }
  }

  /// `value(for:fetch:)` whose fetch returns `1000 + step` at once.
  mutating func call(_ step: Int, _ index: Int) async {
    let answer = 1_000 + step
    let log = log
    let cache = cache
    let key = Self.key(index)
    let result: Int
    do {
      result = try await cache.value(for: key) {
        log.append(answer)
        return answer
      }
    } catch {
      fail(step, "value(for: \(index)) threw \(error)")
      return
    }
    guard var entry = entries[index] else {
      // A miss: its own fetch's answer.
      report.misses += 1
      if result != answer { fail(step, "miss of \(index) returned \(result), expected its fetch's \(answer)") }
      certainFetches.insert(answer)
      entries[index] = OOModelEntry(values: [result], writtenAt: now, invalidated: false)
      return
    }
    if entry.pending.isEmpty {
      if !entry.values.contains(result) {
        fail(step, "hit of \(index) returned \(result), expected one of \(entry.values.sorted())")
      }
      entry.values = [result]
      let fresh = !entry.invalidated && now - entry.writtenAt < staleTime
      if fresh {
        report.freshHits += 1
      } else {
        report.staleHits += 1
        entry.pending = [answer]
      }
    } else {
      // A refresh is in flight: it landed (the entry is fresh with its answer) or the call joined it (old value).
      if entry.pending.contains(result) {
        land(index, &entry, result)
      } else if !entry.values.contains(result) {
        fail(
          step,
          "hit of \(index) while refreshing returned \(result), expected one of \((entry.values.union(entry.pending)).sorted())"
        )
      } else {
        entry.values = [result]
      }
    }
    entries[index] = entry
  }

  /// The refresh in flight landed with `value`.
  mutating func land(_ index: Int, _ entry: inout OOModelEntry, _ value: Int) {
    certainFetches.insert(value)
    entry.values = [value]
    entry.pending = []
    entry.writtenAt = now  // the clock does not move while a refresh is in flight (see `advance`)
    entry.invalidated = false
  }

  mutating func set(_ step: Int, _ index: Int) {
    report.sets += 1
    let value = 500_000 + step
    cache.set(value, for: Self.key(index))
    if let pending = entries[index]?.pending { maybeFetches.formUnion(pending) }
    entries[index] = OOModelEntry(values: [value], writtenAt: now, invalidated: false)
  }

  mutating func markInvalid(_ index: Int) {
    guard var entry = entries[index] else { return }
    // A refresh in flight is superseded; it may have landed first.
    maybeFetches.formUnion(entry.pending)
    entry.values.formUnion(entry.pending)
    entry.pending = []
    entry.invalidated = true
    entries[index] = entry
  }

  mutating func invalidate(_ step: Int, _ index: Int) {
    report.invalidations += 1
    cache.invalidate(Self.key(index))
    markInvalid(index)
  }

  mutating func invalidatePrefix(_ step: Int, _ index: Int) {
    report.invalidations += 1
    if random.next() % 2 == 0 {
      cache.invalidate(prefix: "oo")
      for index in 0..<Self.keyCount { markInvalid(index) }
    } else {
      cache.invalidate(prefix: "oo", index)
      markInvalid(index)
    }
  }

  mutating func remove(_ step: Int, _ index: Int) {
    report.removals += 1
    cache.remove(Self.key(index))
    if let pending = entries[index]?.pending { maybeFetches.formUnion(pending) }
    entries[index] = nil
  }

  mutating func removeAll(_ step: Int) {
    report.removals += 1
    cache.removeAll()
    for entry in entries.values { maybeFetches.formUnion(entry.pending) }
    entries = [:]
    warmPresent = false
  }

  /// Lets every refresh in flight land, then moves the clock.
  mutating func advance(_ step: Int) async {
    for index in 0..<Self.keyCount { await settle(step, index) }
    let choices: [Duration] = [.seconds(1), .seconds(3), .seconds(7), .seconds(10)]
    let by = choices[Int(random.next() % UInt64(choices.count))]
    report.advances += 1
    now += by
    clock.advance(by: by)
  }

  /// Waits until the refresh in flight for `index` (if any) has landed: "refreshes the entry in the background".
  mutating func settle(_ step: Int, _ index: Int) async {
    guard var entry = entries[index], !entry.pending.isEmpty else { return }
    let cache = cache
    let key = Self.key(index)
    let pending = entry.pending
    let hangLimit = ContinuousClock.now + .seconds(300)
    var seen: Int?
    while ContinuousClock.now < hangLimit {
      seen = await cache.value(for: key)
      if let seen, pending.contains(seen) { break }
      if let seen, !entry.values.contains(seen) {
        fail(step, "while refreshing \(index): read \(seen), expected one of \(entry.values.union(pending).sorted())")
        break
      }
      await Task.yield()
    }
    guard let seen, pending.contains(seen) else {
      fail(
        step,
        "the background refresh of \(index) never landed (\(pending.sorted())); last read \(String(describing: seen))")
      entry.pending = []
      entries[index] = entry
      return
    }
    land(index, &entry, seen)
    entries[index] = entry
  }

  /// Reads every key back with the synchronous face (awaited) and the count.
  mutating func readBack(_ step: Int) async {
    for index in 0..<Self.keyCount {
      let read = await cache.value(for: Self.key(index))
      guard var entry = entries[index] else {
        if let read { fail(step, "read of removed/absent \(index) gave \(read), expected nil") }
        continue
      }
      guard let read else {
        fail(step, "read of \(index) gave nil, expected one of \(entry.values.union(entry.pending).sorted())")
        continue
      }
      if entry.pending.contains(read) {
        land(index, &entry, read)
      } else if entry.values.contains(read) {
        entry.values = [read]
      } else {
        fail(step, "read of \(index) gave \(read), expected one of \(entry.values.union(entry.pending).sorted())")
      }
      entries[index] = entry
    }
    let count = await cache.count
    let expected = entries.count + (warmPresent ? 1 : 0)
    if count != expected { fail(step, "count \(count), expected \(expected)") }
  }
}

/// A main-actor screen with a `@Loadable` state and an observer that records its history.
@MainActor
final class OOScreen {
  @Loadable var x: LoadableState<Int>
  var history: [LoadableState<Int>] = []
  var tokens: [ObservationToken] = []

  init() {
    tokens.append($x.observe { [weak self] in self?.history.append($0) })
  }
}

// MARK: - Tests

@Suite struct OffMainOutsiderTests {
  // 1. A seeded random sequence of calls from one detached task, checked against a model of the docs.
  @Test(arguments: [false, true], [UInt64(1), 2, 3, 4])
  func aRandomSequenceFromADetachedTaskMatchesTheModel(warmed: Bool, seed: UInt64) async throws {
    let clock = TestClock()
    let staleTime = Duration.seconds(10)
    let cache = try await ooCache(warmed: warmed, staleTime: staleTime, gcTime: .seconds(1_000_000), clock: clock)
    let report = try await Task.detached {
      var run = OOModelRun(
        cache: cache, clock: clock, staleTime: staleTime, warmPresent: warmed, random: MBRandom(seed: seed))
      await run.run(steps: 400)
      return run.report
    }.ofValue()
    #expect(report.mismatches.isEmpty, "\(report.mismatches.joined(separator: "\n"))")
    // The sequence covered every kind of step.
    #expect(report.misses > 0)
    #expect(report.freshHits > 0)
    #expect(report.staleHits > 0)
    #expect(report.sets > 0)
    #expect(report.invalidations > 0)
    #expect(report.removals > 0)
    #expect(report.advances > 0)
  }

  // 2a. One cancelled caller ends at once; the fetch goes on for the others.
  @Test(arguments: [false, true])
  func aCancelledCallerEndsAtOnceAndTheFetchGoesOn(warmed: Bool) async throws {
    let cache = try await ooCache(warmed: warmed)
    let key = CacheKey<Int>("oo", "cancel-one")
    let gate = ActorGate()
    let fetches = OFCounter()
    let sawCancellation = OFFlag()
    let started = OFCounter()
    let fetch: @Sendable () async throws -> Int = {
      _ = fetches.next()
      await gate.wait()
      sawCancellation.set(Task.isCancelled)
      return 9
    }
    let first = ooCaller(cache, key, started: started, fetch: fetch)
    await ooUntilAtGate(gate, 1)
    let others = (0..<3).map { _ in ooCaller(cache, key, started: started, fetch: fetch) }
    await ooLetCallersJoin(started, 4)
    others[0].cancel()
    // Ends while the fetch still waits at the gate.
    #expect(await ooOutcome(of: others[0]) == .cancelled)
    #expect(gate.waiting == 1)
    // A caller whose task is cancelled before it calls ends at once too, and the fetch still goes on.
    let preCancelled = Task.detached {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await cache.value(for: key, fetch: fetch)
    }
    #expect(await ooOutcome(of: preCancelled) == .cancelled)
    gate.open()
    #expect(await ooOutcome(of: first) == .value(9))
    #expect(await ooOutcome(of: others[1]) == .value(9))
    #expect(await ooOutcome(of: others[2]) == .value(9))
    #expect(fetches.value == 1)
    #expect(sawCancellation.value == false)
    #expect(await MainActor.run { cache.value(for: key) } == 9)
  }

  // 2b. When every caller is cancelled, the fetch is cancelled; nothing is kept and the next call fetches again.
  @Test(arguments: [false, true])
  func whenEveryCallerIsCancelledTheFetchObservesIt(warmed: Bool) async throws {
    let cache = try await ooCache(warmed: warmed)
    let key = CacheKey<Int>("oo", "cancel-all")
    let fetches = OFCounter()
    let fetchStarted = OFFlag()
    let sawCancellation = OFFlag()
    let started = OFCounter()
    let fetch: @Sendable () async throws -> Int = {
      _ = fetches.next()
      fetchStarted.set(true)
      await untilCancelled(timeLimit: .seconds(300))
      sawCancellation.set(Task.isCancelled)
      try Task.checkCancellation()
      return 9
    }
    let callers = (0..<3).map { _ in ooCaller(cache, key, started: started, fetch: fetch) }
    await ofUntil("the fetch started") { fetchStarted.value == true }
    await ooLetCallersJoin(started, 3)
    for caller in callers { caller.cancel() }
    for caller in callers { #expect(await ooOutcome(of: caller) == .cancelled) }
    await ofUntil("the fetch ended") { sawCancellation.value != nil }
    #expect(sawCancellation.value == true)
    #expect(fetches.value == 1)
    #expect(await MainActor.run { cache.value(for: key) } == nil)
    let again = ooCaller(cache, key) { 10 }
    #expect(await ooOutcome(of: again) == .value(10))
    #expect(fetches.value == 1)
    #expect(await MainActor.run { cache.value(for: key) } == 10)
  }

  // 2c. A caller whose task is cancelled before it calls throws at once and starts no fetch.
  @Test(arguments: [false, true])
  func aCallerCancelledBeforeItCallsStartsNoFetch(warmed: Bool) async throws {
    let cache = try await ooCache(warmed: warmed)
    let key = CacheKey<Int>("oo", "pre-cancelled")
    let fetches = OFCounter()
    let caller = Task.detached {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await cache.value(for: key) {
        _ = fetches.next()
        return 1
      }
    }
    #expect(await ooOutcome(of: caller) == .cancelled)
    #expect(fetches.value == 0)
    let (value, count) = await MainActor.run { (cache.value(for: key), cache.count) }
    #expect(value == nil)
    #expect(count == (warmed ? 1 : 0))
    // Nothing was left behind: the next call fetches.
    let next = ooCaller(cache, key) {
      _ = fetches.next()
      return 2
    }
    #expect(await ooOutcome(of: next) == .value(2))
    #expect(fetches.value == 1)
  }

  // 3. A main-actor `set` while an off-main fetch runs: every caller returns the set value, which stays.
  @Test(arguments: [false, true])
  func aMainActorSetWhileAnOffMainFetchRunsWinsForEveryCaller(warmed: Bool) async throws {
    let cache = try await ooCache(warmed: warmed)
    let key = CacheKey<Int>("oo", "set-in-flight")
    let gate = ActorGate()
    let fetches = OFCounter()
    let fetchEnded = OFFlag()
    let started = OFCounter()
    let fetch: @Sendable () async throws -> Int = {
      _ = fetches.next()
      await gate.wait()
      fetchEnded.set(true)
      return 1
    }
    let first = ooCaller(cache, key, started: started, fetch: fetch)
    await ooUntilAtGate(gate, 1)
    let others = (0..<3).map { _ in ooCaller(cache, key, started: started, fetch: fetch) }
    await ooLetCallersJoin(started, 4)
    await MainActor.run { cache.set(99, for: key) }
    // Every caller returns what overtook its fetch — while the fetch still waits at the gate.
    for caller in [first] + others { #expect(await ooOutcome(of: caller) == .value(99)) }
    #expect(gate.waiting == 1)
    gate.open()
    await ofUntil("the fetch ended") { fetchEnded.value == true }
    for _ in 0..<100 {
      #expect(await MainActor.run { cache.value(for: key) } == 99)
      let hit = ooCaller(cache, key) {
        _ = fetches.next()
        return -1
      }
      #expect(await ooOutcome(of: hit) == .value(99))
      await Task.yield()
    }
    #expect(fetches.value == 1)
    #expect(await MainActor.run { cache.count } == (warmed ? 2 : 1))
  }

  // 3b. The same with the `set` from another detached task.
  @Test(arguments: [false, true])
  func anOffMainSetWhileAnOffMainFetchRunsWinsForEveryCaller(warmed: Bool) async throws {
    let cache = try await ooCache(warmed: warmed)
    let key = CacheKey<Int>("oo", "off-main-set-in-flight")
    let gate = ActorGate()
    let fetches = OFCounter()
    let fetchEnded = OFFlag()
    let started = OFCounter()
    let fetch: @Sendable () async throws -> Int = {
      _ = fetches.next()
      await gate.wait()
      fetchEnded.set(true)
      return 1
    }
    let callers = (0..<3).map { _ in ooCaller(cache, key, started: started, fetch: fetch) }
    await ooUntilAtGate(gate, 1)
    await ooLetCallersJoin(started, 3)
    try await Task.detached { cache.set(77, for: key) }.ofValue()
    for caller in callers { #expect(await ooOutcome(of: caller) == .value(77)) }
    gate.open()
    await ofUntil("the fetch ended") { fetchEnded.value == true }
    for _ in 0..<100 {
      let read = try await Task.detached { await cache.value(for: key) }.ofValue()
      #expect(read == 77)
      await Task.yield()
    }
    #expect(fetches.value == 1)
  }

  // 4. Main-actor reads right after an off-main `value(for:)` returned reflect it.
  @Test(arguments: [false, true])
  func mainActorReadsSeeAnOffMainValueAtOnce(warmed: Bool) async throws {
    let cache = try await ooCache(warmed: warmed)
    let base = warmed ? 1 : 0
    for index in 0..<30 {
      let key = CacheKey<Int>("oo", "read", index)
      let value = try await Task.detached { try await cache.value(for: key) { index * 3 } }.ofValue()
      #expect(value == index * 3)
      let (count, read) = await MainActor.run { (cache.count, cache.value(for: key)) }
      #expect(count == base + index + 1, "after \(index)")
      #expect(read == index * 3, "after \(index)")
      // And from another detached task.
      let offMainCount = try await Task.detached { await cache.count }.ofValue()
      #expect(offMainCount == base + index + 1)
    }
    // A fresh hit off the main actor after the main actor read the key runs nothing.
    let hit = try await Task.detached {
      try await cache.value(for: CacheKey<Int>("oo", "read", 4)) { -1 }
    }.ofValue()
    #expect(hit == 12)
  }

  // 4b. Main-actor writes (invalidate(prefix:), remove, removeAll) reach values fetched off the main actor.
  @Test(arguments: [false, true])
  func mainActorWritesReachOffMainValues(warmed: Bool) async throws {
    let cache = try await ooCache(warmed: warmed)
    let base = warmed ? 1 : 0
    let p1 = CacheKey<Int>("oo", "p", 1)
    let p2 = CacheKey<Int>("oo", "p", 2)
    let q = CacheKey<Int>("oo", "q")
    for (key, value) in [(p1, 1), (p2, 2), (q, 3)] {
      #expect(try await Task.detached { try await cache.value(for: key) { value } }.ofValue() == value)
    }
    await MainActor.run { cache.invalidate(prefix: "oo", "p") }
    let fetches = OFCounter()
    // Stale: the old value, and a background refresh.
    let stale = try await Task.detached {
      try await cache.value(for: p1) {
        _ = fetches.next()
        return 11
      }
    }.ofValue()
    #expect(stale == 1)
    await ofUntil("the refresh of p1 landed") { await MainActor.run { cache.value(for: p1) } == 11 }
    // q was not invalidated: a fresh hit.
    #expect(try await Task.detached { try await cache.value(for: q) { -1 } }.ofValue() == 3)
    // p2 is stale: old value first.
    #expect(try await Task.detached { try await cache.value(for: p2) { 22 } }.ofValue() == 2)
    await ofUntil("the refresh of p2 landed") { await MainActor.run { cache.value(for: p2) } == 22 }
    #expect(fetches.value == 1)

    await MainActor.run { cache.remove(q) }
    #expect(await MainActor.run { cache.count } == base + 2)
    #expect(try await Task.detached { try await cache.value(for: q) { 30 } }.ofValue() == 30)
    #expect(await MainActor.run { cache.count } == base + 3)

    await MainActor.run { cache.removeAll() }
    #expect(await MainActor.run { cache.count } == 0)
    for (key, value) in [(p1, 100), (p2, 200), (q, 300)] {
      #expect(try await Task.detached { try await cache.value(for: key) { value } }.ofValue() == value)
    }
    let reads = await MainActor.run { [cache.value(for: p1), cache.value(for: p2), cache.value(for: q)] }
    #expect(reads == [100, 200, 300])
    #expect(await MainActor.run { cache.count } == 3)
  }

  // 5. gcTime: a value fetched off the main actor with no state bound is gone once gcTime has passed, not before.
  @Test(arguments: [false, true])
  func anOffMainValueIsCollectedAfterGCTime(warmed: Bool) async throws {
    let clock = TestClock()
    let cache = try await ooCache(warmed: warmed, staleTime: .seconds(3_600), gcTime: .seconds(10), clock: clock)
    let key = CacheKey<Int>("oo", "gc")
    #expect(try await Task.detached { try await cache.value(for: key) { 5 } }.ofValue() == 5)
    let before = warmed ? 2 : 1
    for _ in 0..<9 {
      clock.advance(by: .seconds(1))
      let (count, read) = await MainActor.run { (cache.count, cache.value(for: key)) }
      #expect(count == before)
      #expect(read == 5)
    }
    clock.advance(by: .milliseconds(999))
    #expect(await MainActor.run { cache.value(for: key) } == 5)
    clock.advance(by: .milliseconds(1))
    clock.advance(by: .seconds(1))
    await ofUntil("the value is collected") {
      await MainActor.run { cache.count == 0 && cache.value(for: key) == nil }
    }
    // A miss again.
    let fetches = OFCounter()
    let again = try await Task.detached {
      try await cache.value(for: key) {
        _ = fetches.next()
        return 6
      }
    }.ofValue()
    #expect(again == 6)
    #expect(fetches.value == 1)
  }

  // 5b. gcTime with no main-actor read meanwhile: after gcTime an off-main call fetches again; before, it does not.
  @Test(arguments: [false, true])
  func anOffMainValueUntouchedByTheMainActorIsCollectedAfterGCTime(warmed: Bool) async throws {
    let clock = TestClock()
    let cache = try await ooCache(warmed: warmed, staleTime: .seconds(3_600), gcTime: .seconds(10), clock: clock)
    let key = CacheKey<Int>("oo", "gc-untouched")
    #expect(try await Task.detached { try await cache.value(for: key) { 5 } }.ofValue() == 5)
    for _ in 0..<11 { clock.advance(by: .seconds(1)) }
    // 11 s after the fetch ended (gcTime 10 s): polled for up to 300 s of real time (a hang detector only; the cold
    // cache collects it at once).
    let collected = await ooHolds(within: .seconds(300)) {
      await MainActor.run { cache.count == 0 && cache.value(for: key) == nil }
    }
    let (count, read) = await MainActor.run { (cache.count, cache.value(for: key)) }
    var later = ""
    if !collected {
      // When is it collected, then? gcTime after the main actor first read it?
      clock.advance(by: .seconds(10))
      let collectedLater = await ooHolds(within: .seconds(300)) {
        await MainActor.run { cache.count == 0 && cache.value(for: key) == nil }
      }
      later = "; after 10 s more: \(collectedLater ? "collected" : "still kept")"
    }
    #expect(
      collected,
      "11 s after the fetch ended (gcTime 10 s): count \(count), value \(String(describing: read))\(later)")
    let fetches = OFCounter()
    let again = try await Task.detached {
      try await cache.value(for: key) {
        _ = fetches.next()
        return 6
      }
    }.ofValue()
    #expect(again == 6)
    #expect(fetches.value == 1)
  }

  // 5c. gcTime seen only off the main actor: once gcTime has passed, an off-main call misses (fetches again).
  @Test(arguments: [false, true])
  func anOffMainCallMissesOnceGCTimeHasPassed(warmed: Bool) async throws {
    let clock = TestClock()
    let cache = try await ooCache(warmed: warmed, staleTime: .seconds(3_600), gcTime: .seconds(10), clock: clock)
    let key = CacheKey<Int>("oo", "gc-off-main")
    #expect(try await Task.detached { try await cache.value(for: key) { 5 } }.ofValue() == 5)
    // Before gcTime: a fresh hit.
    clock.advance(by: .seconds(9))
    #expect(try await Task.detached { try await cache.value(for: key) { -1 } }.ofValue() == 5)
    clock.advance(by: .seconds(2))
    // After: a miss, once the collection (if any runs) is done. Hang detector: 300 s of real time.
    let fetches = OFCounter()
    var last = 0
    let missed = await ooHolds(within: .seconds(300)) {
      last =
        (try? await Task.detached {
          try await cache.value(for: key) {
            _ = fetches.next()
            return 6
          }
        }.ofValue()) ?? -2
      return last == 6
    }
    #expect(missed, "11 s after the fetch ended (gcTime 10 s), an off-main call still returned \(last)")
    #expect(fetches.value == (missed ? 1 : 0))
  }

  // 6a. A fetch's error reaches every joined caller and is not kept: the next call fetches again.
  @Test(arguments: [false, true])
  func aFetchErrorReachesEveryCallerAndIsNotKept(warmed: Bool) async throws {
    let cache = try await ooCache(warmed: warmed)
    let key = CacheKey<Int>("oo", "error")
    let gate = ActorGate()
    let fetches = OFCounter()
    let started = OFCounter()
    let fetch: @Sendable () async throws -> Int = {
      _ = fetches.next()
      await gate.wait()
      throw OFFailure()
    }
    let first = ooCaller(cache, key, started: started, fetch: fetch)
    await ooUntilAtGate(gate, 1)
    let others = (0..<3).map { _ in ooCaller(cache, key, started: started, fetch: fetch) }
    await ooLetCallersJoin(started, 4)
    gate.open()
    for caller in [first] + others { #expect(await ooOutcome(of: caller) == .failure) }
    let failedFetches = fetches.value
    #expect((1...4).contains(failedFetches))
    #expect(await MainActor.run { cache.value(for: key) } == nil)
    let next = ooCaller(cache, key) {
      _ = fetches.next()
      return 5
    }
    #expect(await ooOutcome(of: next) == .value(5))
    #expect(fetches.value == failedFetches + 1)
    #expect(await MainActor.run { cache.value(for: key) } == 5)
  }

  // 6b. A fetch that throws CancellationError while nobody cancelled: callers end with it, no hang; next call fetches.
  @Test(arguments: [false, true])
  func aFetchThrowingCancellationEndsItsCallers(warmed: Bool) async throws {
    let cache = try await ooCache(warmed: warmed)
    let key = CacheKey<Int>("oo", "fetch-cancellation")
    let gate = ActorGate()
    let fetches = OFCounter()
    let started = OFCounter()
    let fetch: @Sendable () async throws -> Int = {
      _ = fetches.next()
      await gate.wait()
      throw CancellationError()
    }
    let first = ooCaller(cache, key, started: started, fetch: fetch)
    await ooUntilAtGate(gate, 1)
    let others = (0..<2).map { _ in ooCaller(cache, key, started: started, fetch: fetch) }
    await ooLetCallersJoin(started, 3)
    gate.open()
    for caller in [first] + others { #expect(await ooOutcome(of: caller) == .cancelled) }
    let failedFetches = fetches.value
    #expect(await MainActor.run { cache.value(for: key) } == nil)
    let next = ooCaller(cache, key) {
      _ = fetches.next()
      return 5
    }
    #expect(await ooOutcome(of: next) == .value(5))
    #expect(fetches.value == failedFetches + 1)
  }

  // 6c. Parity of `count` after a failed off-main fetch ("keys with a value, a last error, …"): same in both modes.
  @Test func countAfterAFailedFetchIsTheSameInBothModes() async throws {
    var counts: [Int] = []
    for warmed in [false, true] {
      let cache = try await ooCache(warmed: warmed)
      let key = CacheKey<Int>("oo", "error-count")
      let outcome = await ooOutcome(of: ooCaller(cache, key) { throw OFFailure() })
      #expect(outcome == .failure)
      counts.append(await MainActor.run { cache.count } - (warmed ? 1 : 0))
    }
    #expect(counts[0] == counts[1], "count (without the warm key) cold: \(counts[0]), warmed: \(counts[1])")
  }

  // 7. A main-actor state loading the key joins the off-main fetch in flight.
  @Test(arguments: [false, true])
  func aMainActorStateJoinsAnOffMainFetch(warmed: Bool) async throws {
    let cache = try await ooCache(warmed: warmed)
    let key = CacheKey<Int>("oo", "state-joins")
    let gate = ActorGate()
    let fetches = OFCounter()
    let caller = ooCaller(cache, key) {
      _ = fetches.next()
      await gate.wait()
      return 4
    }
    await ooUntilAtGate(gate, 1)
    let stateRuns = OFCounter()
    let (screen, load) = await MainActor.run {
      let screen = OOScreen()
      let load = screen.$x.load(key, in: cache) {
        _ = stateRuns.next()
        return -1
      }
      return (screen, load)
    }
    gate.open()
    #expect(await ooOutcome(of: caller) == .value(4))
    try await load.ofValue()
    #expect(stateRuns.value == 0)
    #expect(fetches.value == 1)
    let (state, history) = await MainActor.run { (screen.x, screen.history) }
    #expect(state == .loaded(4))
    #expect(history == [.loading, .loaded(4)])
    #expect(await MainActor.run { cache.value(for: key) } == 4)
  }

  // 7b. The state waits for the fetch too: cancelling the only caller does not cancel it.
  @Test(arguments: [false, true])
  func aMainActorStateKeepsTheFetchGoingWhenTheCallerIsCancelled(warmed: Bool) async throws {
    let cache = try await ooCache(warmed: warmed)
    let key = CacheKey<Int>("oo", "state-keeps")
    let gate = ActorGate()
    let sawCancellation = OFFlag()
    let caller = ooCaller(cache, key) {
      await gate.wait()
      sawCancellation.set(Task.isCancelled)
      return 4
    }
    await ooUntilAtGate(gate, 1)
    let stateRuns = OFCounter()
    let (screen, load) = await MainActor.run {
      let screen = OOScreen()
      let load = screen.$x.load(key, in: cache) {
        _ = stateRuns.next()
        return -1
      }
      return (screen, load)
    }
    caller.cancel()
    #expect(await ooOutcome(of: caller) == .cancelled)
    gate.open()
    try await load.ofValue()
    #expect(sawCancellation.value == false)
    #expect(stateRuns.value == 0)
    let (state, history) = await MainActor.run { (screen.x, screen.history) }
    #expect(state == .loaded(4))
    #expect(history == [.loading, .loaded(4)])
  }
}

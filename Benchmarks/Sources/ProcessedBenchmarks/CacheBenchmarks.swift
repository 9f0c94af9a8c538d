// What the shared cache (`LoadCache`) costs: a fresh hit against the usual boilerplate and against the floor a
// careful engineer would write, a miss cycle against an uncached load cycle, the heap bytes of an entry, and
// `invalidate(prefix:)` and a focus return in a large cache against a small one; then `value(for:)` from a task off
// the main actor (`ValueBenchmarks.swift`).
import HandWritten
import Processed

extension ProcessedBenchmarks {
  @MainActor
  static func cacheBenchmarks() async {
    await freshHits()
    await missCycles()
    cacheMemory()
    await prefixInvalidation()
    await focusReturns()
    await valueBenchmarks()
  }

  /// `$x.load(key, in: cache) { … }` on a fresh value with one observer on the state, Task form (a fresh hit returns
  /// a shared, finished task; it is awaited as the cycle benchmarks await theirs), against:
  /// - the boilerplate: a dictionary lookup and a `Task { @MainActor in state = .loaded(v) }`, awaited;
  /// - the floor: a main-actor dictionary of entries with their subscribers' write closures; a hit checks the value's
  ///   age, subscribes the state if it is not yet, writes it and notifies its observer synchronously.
  /// Every side builds its key in the call, as a screen does (`.profile(id)`), and has the same observer body; a
  /// second row builds Processed's key once, to show what building a `CacheKey` costs, and a third calls the `async`
  /// form, which returns no task to await.
  @MainActor
  static func freshHits() async {
    let hits = 10_000
    let sink = Sink()

    let cache = LoadCache(staleTime: .seconds(3600))
    cache.set(7, for: CacheKey<Int>("k", 0))
    let loadable = Loadable<Int>()
    let controller = loadable.projectedValue
    let token = controller.observe { sink.take($0) }
    let builtKey = CacheKey<Int>("k", 0)

    let boilerplateCache = HandBoilerplateCache()
    boilerplateCache.values[HandCacheKey("k", 0)] = 7
    let boilerplate = HandBoilerplateState()
    _ = boilerplate.observers.add { sink.take($0) }

    let floor = HandSharedCache(staleTime: .seconds(3600))
    floor.set(7, for: HandCacheKey("k", 0))
    let floorState = HandSharedState()
    _ = floorState.observers.add { sink.take($0) }

    let results = await measureSideBySide(
      operations: hits,
      [
        {
          for i in 0..<hits {
            let task: Task<Void, Never> = controller.load(CacheKey<Int>("k", 0), in: cache) { i }
            await task.value
          }
        },
        { for _ in 0..<hits { await boilerplate.showCached(HandCacheKey("k", 0), in: boilerplateCache)!.value } },
        { for _ in 0..<hits { _ = floor.load(floorState, key: HandCacheKey("k", 0)) } },
        {
          for i in 0..<hits {
            let task: Task<Void, Never> = controller.load(builtKey, in: cache) { i }
            await task.value
          }
        },
        { for i in 0..<hits { await controller.load(CacheKey<Int>("k", 0), in: cache) { i } } },
      ])
    let (ours, boilerplateResult, floorResult, oursBuiltKey) = (results[0], results[1], results[2], results[3])
    let oursAsync = results[4]
    precondition(loadable.wrappedValue == .loaded(7) && floorState.state == .loaded(7), "not hits")
    Bench.record(
      "shared cache", "fresh hit, $x.load(key, in:), Task form", ours: ours,
      against: "dictionary + Task, awaited", boilerplateResult, target: "≥ 5× faster", minSpeedup: 5)
    Bench.record(
      "shared cache", "fresh hit, $x.load(key, in:), Task form", ours: ours,
      against: "main-actor dictionary + closures", floorResult, target: "≤ 2×", maxRatio: 2)
    Bench.record(
      "shared cache", "fresh hit, key built once", ours: oursBuiltKey, against: "main-actor dictionary + closures",
      floorResult)
    Bench.record(
      "shared cache", "fresh hit, `async` form (no task to await)", ours: oursAsync,
      against: "main-actor dictionary + closures", floorResult)
    withExtendedLifetime((token, sink, loadable)) {}
  }

  /// A load of a key the cache does not hold, awaited to the end, against an uncached `$x.load { v }` awaited the
  /// same way; one observer on each state. The key is removed before each load (`cache.remove`, counted), so that
  /// every load is a miss on a cache of constant size: a new key per load would measure a growing cache instead.
  @MainActor
  static func missCycles() async {
    let loads = 2_000
    let plain = Loadable<Int>().projectedValue
    let cached = Loadable<Int>().projectedValue
    let tokens = [plain.observe { _ in }, cached.observe { _ in }]
    let cache = LoadCache()
    let results = await measureSideBySide(
      operations: loads,
      [
        {
          for i in 0..<loads {
            let task: Task<Void, Never> = plain.load { i }
            await task.value
          }
        },
        {
          for i in 0..<loads {
            let key = CacheKey<Int>("m", 0)
            cache.remove(key)
            let task: Task<Void, Never> = cached.load(key, in: cache) { i }
            await task.value
          }
        },
        { for i in 0..<loads { await plain.load { i } } },
        {
          for i in 0..<loads {
            let key = CacheKey<Int>("m", 0)
            cache.remove(key)
            await cached.load(key, in: cache) { i }
          }
        },
      ])
    Bench.record(
      "shared cache", "cached miss cycle, Task form", ours: results[1], against: "uncached $x.load { v }, Task",
      results[0], target: "≤ 1.3×", maxRatio: 1.3)
    Bench.record(
      "shared cache", "cached miss cycle, async form", ours: results[3], against: "uncached $x.load { v }, async",
      results[2], target: "≤ 1.3×", maxRatio: 1.3)
    withExtendedLifetime(tokens) {}
  }

  /// Heap bytes `cache.set(i, for: CacheKey<Int>("k", i))` keeps per entry over 100,000 keys, no state bound.
  @MainActor
  static func cacheMemory() {
    let cache = LoadCache()
    if let perEntry = heapBytesPerCall(100_000, { cache.set($0, for: CacheKey<Int>("k", $0)) }) {
      Bench.absolute.append(
        (
          "heap bytes per cache entry (100,000 set, no bound state)", perEntry.description, "≤ 512",
          perEntry.bytes <= 512
        ))
    }
    precondition(cache.count == 100_000)
    // Of which the key: a `CacheKey<Int>("k", i)` kept in an array reserved beforehand (its components' storage).
    var keys: [CacheKey<Int>] = []
    keys.reserveCapacity(100_000)
    if let perKey = heapBytesPerCall(100_000, { keys.append(CacheKey<Int>("k", $0)) }) {
      Bench.absolute.append(("heap bytes per CacheKey<Int>(\"k\", i) (of the above)", perKey.description, "", nil))
    }
    withExtendedLifetime((cache, keys)) {}
  }

  /// `invalidate(prefix: "p")` of the 10 keys `("p", j)` among 100,000 entries, against the same among 100; the
  /// other keys are `("k", i)`. No state is bound, so nothing fetches: the time is finding and marking the keys.
  @MainActor
  static func prefixInvalidation() async {
    let calls = 2_000
    func filled(_ total: Int) -> LoadCache {
      let cache = LoadCache()
      for j in 0..<10 { cache.set(j, for: CacheKey<Int>("p", j)) }
      for i in 0..<(total - 10) { cache.set(i, for: CacheKey<Int>("k", i)) }
      precondition(cache.count == total)
      return cache
    }
    let large = filled(100_000)
    let small = filled(100)
    let results = await measureSideBySide(
      operations: calls,
      [
        { for _ in 0..<calls { small.invalidate(prefix: "p") } },
        { for _ in 0..<calls { large.invalidate(prefix: "p") } },
      ])
    Bench.record(
      "shared cache", "invalidate(prefix:), 10 of 100,000 keys", ours: results[1], against: "10 of 100 keys",
      results[0], target: "≤ 10×", maxRatio: 10)
  }

  /// `cache.setFocused(false); cache.setFocused(true)` with 10 stale entries bound to states among 10,000 entries,
  /// against the same among 100 (`staleTime: .zero`, `revalidationThrottle: .zero`: every return refetches the 10).
  /// The entries are `("k", i)`, written with `set`; 10 of them, spread over the keys, are loaded by the `@Loadable`
  /// state of 10 `FocusScreen`s, whose block counts its fetch and returns at once. Each iteration then yields until
  /// an observer on each state has seen the 10 refetches' writes (a fetch writes after it has ended): no sleep.
  @MainActor
  static func focusReturns() async {
    let returns = 500
    let probe = FocusProbe()
    func bound(_ total: Int) async -> (cache: LoadCache, screens: [FocusScreen], tokens: [ObservationToken]) {
      let cache = LoadCache(staleTime: .zero, revalidationThrottle: .zero)
      for i in 0..<total { cache.set(i, for: CacheKey<Int>("k", i)) }
      precondition(cache.count == total)
      let screens = (0..<10).map { _ in FocusScreen() }
      var tokens: [ObservationToken] = []
      for (j, screen) in screens.enumerated() {
        tokens.append(screen.$number.observe { _ in probe.writes += 1 })
        // Stale at once: shown now and refetched in the background; the task ends with the refetch.
        let id = total + j
        let task: Task<Void, Never> = screen.$number.load(CacheKey<Int>("k", j * (total / 10)), in: cache) {
          probe.fetch(id)
        }
        await task.value
        await probe.settle(screen, id)
      }
      return (cache, screens, tokens)
    }
    let small = await bound(100)
    let large = await bound(10_000)
    let (fetchesBefore, writesBefore) = (probe.fetches, probe.writes)
    probe.startCounting()
    let results = await measureSideBySide(
      operations: returns,
      [
        {
          for _ in 0..<returns {
            small.cache.setFocused(false)
            small.cache.setFocused(true)
            await probe.wait(forWrites: 10)
          }
        },
        {
          for _ in 0..<returns {
            large.cache.setFocused(false)
            large.cache.setFocused(true)
            await probe.wait(forWrites: 10)
          }
        },
      ])
    // Every focus return refetched its 10 bound entries and nothing else (the warm-up and allocation count included).
    let bodyRuns = Bench.rounds + 1 + (Bench.interposerLoaded ? 1 : 0)
    await Task.yield()
    precondition(probe.fetches - fetchesBefore == 2 * bodyRuns * returns * 10, "not 10 refetches per focus return")
    precondition(probe.writes - writesBefore == 2 * bodyRuns * returns * 10, "not 10 writes per focus return")
    precondition(small.cache.count == 100 && large.cache.count == 10_000)
    Bench.record(
      "shared cache", "focus return, 10 bound stale of 10,000", ours: results[1], against: "10 bound stale of 100",
      results[0], target: "≤ 2×", maxRatio: 2)
    withExtendedLifetime((small, large)) {}
  }
}

/// A screen showing one cached value, for the focus-return rows.
@MainActor
final class FocusScreen {
  @Loadable var number: LoadableState<Int>
}

/// Counts the focus-return rows' fetches (their blocks) and writes (an observer on each state).
@MainActor
final class FocusProbe {
  var fetches = 0
  var writes = 0
  /// The last answer of each screen's block, by the screen's id.
  private var answers: [Int: Int] = [:]
  /// The writes counted up to the end of the last wait.
  private var waited = 0

  /// A block's fetch: counted, answered at once with a value no earlier fetch answered.
  func fetch(_ id: Int) -> Int {
    fetches += 1
    answers[id] = fetches
    return fetches
  }

  /// Yields until `screen` shows its block's last answer (a set-up load's background refetch has written it).
  func settle(_ screen: FocusScreen, _ id: Int) async {
    var yields = 0
    while answers[id].map({ screen.number != .loaded($0) }) ?? true {
      yields += 1
      precondition(yields < 1_000_000, "a set-up load did not refetch")
      await Task.yield()
    }
  }

  /// The writes seen so far are the set-up's: waits count from here.
  func startCounting() { waited = writes }

  /// Yields until `count` more writes than at the last wait's end have been seen; stops the run if they never come.
  func wait(forWrites count: Int) async {
    let target = waited + count
    var yields = 0
    while writes < target {
      yields += 1
      precondition(yields < 1_000_000, "a focus return did not refetch its \(count) bound entries")
      await Task.yield()
    }
    waited = target
  }
}

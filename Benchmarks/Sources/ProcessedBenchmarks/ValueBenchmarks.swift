// What `LoadCache.value(for:)` costs — a value without a state, asked for from a task that is not on the main actor
// (a service's or a server's) — against what a careful engineer writes for the same job: a lock-protected dictionary
// for the fresh hit, an actor that coalesces concurrent fetches per key for the miss.
import HandWritten
import Processed

extension ProcessedBenchmarks {
  @MainActor
  static func valueBenchmarks() async {
    await valueFreshHits()
    await valueMisses()
  }

  /// Inside a `Task.detached` (off the main actor), a loop of `try await cache.value(for: key) { 0 }` on a fresh entry
  /// (`staleTime` an hour, the value `7` set beforehand), against the same loop over `HandValueCache`: a
  /// `Mutex<[HandCacheKey: (value: Int, written: ContinuousClock.Instant)]>` read with a staleness check. Both build
  /// their key in the call; one detached task per round and side, so its start is shared by 10,000 calls. Every call
  /// must be a hit: the sum of the answers is `7` per call (a fetch would answer 0).
  @MainActor
  static func valueFreshHits() async {
    let hits = 10_000
    let cache = LoadCache(staleTime: .seconds(3600))
    cache.set(7, for: CacheKey<Int>("k", 0))
    let hand = HandValueCache(staleTime: .seconds(3600))
    hand.set(7, for: HandCacheKey("k", 0))
    let results = await measureSideBySide(
      operations: hits,
      [
        {
          let sum = try! await Task.detached {
            var sum = 0
            for _ in 0..<hits { sum &+= try await cache.value(for: CacheKey<Int>("k", 0)) { 0 } }
            return sum
          }.value
          precondition(sum == 7 * hits, "not fresh hits")
        },
        {
          let sum = await Task.detached {
            var sum = 0
            for _ in 0..<hits { sum &+= await hand.value(for: HandCacheKey("k", 0)) { 0 } }
            return sum
          }.value
          precondition(sum == 7 * hits, "not fresh hits")
        },
      ])
    Bench.record(
      "shared cache", "value(for:) fresh hit, from a non-main task", ours: results[0],
      against: "Mutex dictionary + staleness check", results[1], target: "≤ 2×", maxRatio: 2)
  }

  /// Inside a `Task.detached`, a loop of `try await cache.value(for: CacheKey<Int>("m", i)) { i }` with a key never
  /// asked for before on every call (`staleTime` and `gcTime` zero, so that the entries go once their fetch has
  /// ended), against the same loop over `HandSingleflight`, an actor with a dictionary of in-flight `Task<Int, Error>`
  /// per key (joined, or started and removed when it ends), with distinct `HandCacheKey("m", i)`. Every answer is
  /// checked (the sum of the `i`s).
  @MainActor
  static func valueMisses() async {
    let misses = 2_000
    let cache = LoadCache(staleTime: .zero, gcTime: .zero)
    let hand = HandSingleflight()
    var nextKey = 0
    func keys() -> Range<Int> {
      defer { nextKey += misses }
      return nextKey..<(nextKey + misses)
    }
    let results = await measureSideBySide(
      operations: misses,
      [
        {
          let range = keys()
          let sum = try! await Task.detached {
            var sum = 0
            for i in range { sum &+= try await cache.value(for: CacheKey<Int>("m", i)) { i } }
            return sum
          }.value
          precondition(sum == range.reduce(0, &+), "wrong answers")
        },
        {
          let range = keys()
          let sum = try! await Task.detached {
            var sum = 0
            for i in range { sum &+= try await hand.value(for: HandCacheKey("m", i)) { i } }
            return sum
          }.value
          precondition(sum == range.reduce(0, &+), "wrong answers")
        },
      ])
    print("  (value(for:) misses: \(cache.count) entries left in the cache after \(nextKey / 2) keys)")
    Bench.record(
      "shared cache", "value(for:) miss cycle, distinct keys", ours: results[0],
      against: "actor singleflight (Task per key)", results[1], target: "≤ 1.5×", maxRatio: 1.5)
  }
}

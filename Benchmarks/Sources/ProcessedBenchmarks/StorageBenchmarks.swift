// What persisting the shared cache costs: rewriting one of 10,000 persisted entries 100 times a second through a
// `FileCacheStorage` (the CPU share of one core, beside the anchor design that serialises the whole cache on every
// change), and reading one record through the storage against a hand-written `FileManager` + `JSONDecoder` read.
import Foundation
import HandWritten
import Processed
import ProcessedStorage
import ProcessedTesting
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension ProcessedBenchmarks {
  @MainActor
  static func storageBenchmarks() async {
    await rewritingOneEntry()
    await readingOneRecord()
  }

  /// One simulated second of a persisted entry changing 100 times a second, in a cache of 10,000 persisted entries
  /// on a `FileCacheStorage` (written with `set` and flushed first, not timed): 100 `cache.set(v, for: key)` on the
  /// main actor, 10 ms apart on a `TestClock` (the cache's clock). The 100th advance reaches the end of the key's
  /// coalescing interval (1 s after its last write): the cache's timer wakes and writes the last value, and the body
  /// waits for that write to be on disk (the storage is wrapped in a counter that resumes a waiter: one lock per
  /// write), so that its cost is in the second's. Each round runs 10 simulated seconds; every second is checked to have
  /// made exactly one write. A second variant ends each simulated second with `await cache.flush()` instead, which
  /// writes the pending value at once and then awaits every key's last storage operation (10,000 finished tasks).
  ///
  /// Beside it, the anchor design (`HandWholeCacheSnapshot`): every change encodes the whole cache (10,000 names and
  /// `Int`s) with `JSONEncoder` and writes it to one file atomically (temporary file, `fsync`, rename: the storage's
  /// steps). Each round runs 10 changes; its time per second is 100 changes.
  ///
  /// The benchmark runs pinned to one CPU, so the wall-clock time of a second includes the write task's thread and
  /// the waits for the disk (`fsync`); the process's CPU time (every thread, `CLOCK_PROCESS_CPUTIME_ID`) is measured
  /// in the same rounds and excludes the waits.
  @MainActor
  static func rewritingOneEntry() async {
    let entries = 10_000
    let seconds = 10
    let changesPerSecond = 100
    let root = NSTemporaryDirectory() + "processed-bench-storage-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: root) }
    try? FileManager.default.removeItem(atPath: root)
    let directory = root + "/records"

    let clock = TestClock()
    let counter = WriteCounter()
    let storage = CountingStorage(base: FileCacheStorage(directory: directory), counter: counter)
    let cache = LoadCache(staleTime: .seconds(86_400), gcTime: .seconds(1_000_000_000), storage: storage, clock: clock)
    let keys = (0..<entries).map { CacheKey<Int>("k", $0).persisted() }
    let setupStart = ContinuousClock.now
    for (i, key) in keys.enumerated() { cache.set(i, for: key) }
    await cache.flush()
    print("storage: \(entries) persisted entries written and flushed in \(ContinuousClock.now - setupStart)")
    precondition(counter.count == entries, "not one write per entry in the setup")
    let records = try! FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }
    precondition(records.count == entries, "not one record file per entry")

    let key = keys[entries / 2]
    var value = entries
    var simulated = 0

    let snapshot = HandWholeCacheSnapshot(
      values: Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1.storageName!, $0) }),
      path: root + "/cache.json")
    let name = key.storageName!

    let writesBefore = counter.count
    let bodies: [@MainActor () async -> Void] = [
      {
        for _ in 0..<seconds {
          for _ in 0..<changesPerSecond {
            clock.advance(by: .milliseconds(10))
            value += 1
            cache.set(value, for: key)
          }
          simulated += 1
          await counter.wait(until: writesBefore + simulated)
        }
      },
      {
        for _ in 0..<seconds {
          value += 1
          try! snapshot.change(name, to: value)
        }
      },
      {
        for _ in 0..<seconds {
          for _ in 0..<changesPerSecond {
            clock.advance(by: .milliseconds(10))
            value += 1
            cache.set(value, for: key)
          }
          await cache.flush()
          simulated += 1
          precondition(counter.count == writesBefore + simulated, "not one write per simulated second (flush)")
        }
      },
    ]
    let (wall, cpu) = await measureWallAndCPU(operations: seconds, bodies)
    await Task.yield()
    precondition(counter.count - writesBefore == simulated, "not one write per simulated second")
    let stored = try! await FileCacheStorage(directory: directory).read(Int.self, at: name)
    precondition(stored == cache.value(for: key), "the last value is not the one stored")
    let snapshotData = FileManager.default.contents(atPath: snapshot.path)!
    let whole = try! JSONDecoder().decode([String: Int].self, from: snapshotData)
    precondition(whole == snapshot.values && whole.count == entries, "the whole-cache file is not the cache")

    // Per simulated second (100 changes): ours as measured, the anchor's change ×100.
    let anchorWall = scaled(wall[1], by: Double(changesPerSecond))
    let anchorCPU = scaled(cpu[1], by: Double(changesPerSecond))
    Bench.record(
      "persistence", "1 of 10,000 persisted entries set 100×/s, per second (wall)", ours: wall[0],
      against: "whole cache encoded + written per change, ×100", anchorWall)
    Bench.record(
      "persistence", "1 of 10,000 persisted entries set 100×/s, per second (CPU)", ours: cpu[0],
      against: "whole cache encoded + written per change, ×100", anchorCPU)
    let wallShare = wall[0].nanoseconds / 1e9 * 100
    let cpuShare = cpu[0].nanoseconds / 1e9 * 100
    Bench.absolute.append(
      (
        "persisted entry set 100×/s among 10,000: share of one core (process CPU time)",
        "\(fixed(cpuShare, 3)) % (\(fixed(cpu[0].nanoseconds / 1e3, 0)) µs per second)", "≤ 1 %", cpuShare <= 1
      ))
    Bench.absolute.append(
      (
        "the same, wall-clock time on one pinned CPU (includes the fsync wait)",
        "\(fixed(wallShare, 3)) % (\(fixed(wall[0].nanoseconds / 1e3, 0)) µs per second)", "≤ 1 %", wallShare <= 1
      ))
    Bench.absolute.append(
      (
        "the same, each second ended by await cache.flush() (awaits 10,000 keys' last writes)",
        "\(fixed(cpu[2].nanoseconds / 1e3, 0)) µs CPU, \(fixed(wall[2].nanoseconds / 1e3, 0)) µs wall per second", "",
        nil
      ))
    Bench.absolute.append(
      (
        "anchor: whole cache (10,000 entries) encoded + written atomically, per change",
        "\(fixed(wall[1].nanoseconds / 1e6, 2)) ms wall, \(fixed(cpu[1].nanoseconds / 1e6, 2)) ms CPU", "", nil
      ))
    Bench.absolute.append(
      (
        "anchor at 100 changes/s: share of one core",
        "\(fixed(anchorWall.nanoseconds / 1e9 * 100, 0)) % wall, \(fixed(anchorCPU.nanoseconds / 1e9 * 100, 0)) % CPU",
        "", nil
      ))
    withExtendedLifetime(cache) {}
  }

  /// One record read and decoded through `FileCacheStorage.read([Post].self, at:)` (a `[Post]` of 20 small posts,
  /// written by the storage in the setup) against `HandRecordReader`, an actor that reads the same file with
  /// `FileManager.default.contents(atPath:)` and decodes the same envelope with `JSONDecoder`, checking its name,
  /// version and age. Both are actors called from the main actor and awaited one read at a time, so each read makes
  /// the same two hops (to the actor and back).
  @MainActor
  static func readingOneRecord() async {
    let reads = 2_000
    let directory = NSTemporaryDirectory() + "processed-bench-read-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try? FileManager.default.removeItem(atPath: directory)
    let posts = (0..<20).map(Post.init(sample:))
    let name = CacheKey<[Post]>("feed", 1).persisted().storageName!
    let storage = FileCacheStorage(directory: directory)
    try! await storage.write(posts, at: name)
    let files = try! FileManager.default.contentsOfDirectory(atPath: directory)
    precondition(files.count == 1, "not one record file")
    let path = directory + "/" + files[0]
    let reader = HandRecordReader()
    let bytes = FileManager.default.contents(atPath: path)!.count
    let storedPosts = try! await storage.read([Post].self, at: name)
    let handPosts = try! await reader.read([Post].self, name: name, at: path)
    precondition(storedPosts == posts && handPosts == posts, "the record does not read back")

    var total = 0
    let results = await measureSideBySide(
      operations: reads,
      [
        { for _ in 0..<reads { total &+= try! await storage.read([Post].self, at: name)!.count } },
        { for _ in 0..<reads { total &+= try! await reader.read([Post].self, name: name, at: path)!.count } },
      ])
    Bench.record(
      "persistence", "FileCacheStorage.read, [Post] ×20 (\(bytes) B)", ours: results[0],
      against: "actor: FileManager + JSONDecoder", results[1], target: "≤ 2×", maxRatio: 2)
    withExtendedLifetime(total) {}
  }
}

/// Counts the writes that reached the storage, and resumes a waiter once they reach its count.
final class WriteCounter: Sendable {
  private struct State {
    var count = 0
    var waiter: (until: Int, continuation: CheckedContinuation<Void, Never>)?
  }

  private let state = Mutex(State())

  var count: Int { state.withLock { $0.count } }

  /// One more write; a waiter whose count is reached is resumed (after unlocking).
  func add() {
    let resumed = state.withLock { state -> CheckedContinuation<Void, Never>? in
      state.count += 1
      guard let waiter = state.waiter, state.count >= waiter.until else { return nil }
      state.waiter = nil
      return waiter.continuation
    }
    resumed?.resume()
  }

  /// Returns once `count` writes have been counted (one waiter at a time).
  func wait(until count: Int) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let ready = state.withLock { state -> Bool in
        if state.count >= count { return true }
        precondition(state.waiter == nil, "one waiter at a time")
        state.waiter = (count, continuation)
        return false
      }
      if ready { continuation.resume() }
    }
  }
}

/// A `FileCacheStorage` whose successful writes are counted.
struct CountingStorage: CacheStorage {
  let base: FileCacheStorage
  let counter: WriteCounter

  func read<V: Codable & Sendable>(_ type: V.Type, at name: String) async throws -> V? {
    try await base.read(type, at: name)
  }

  func write<V: Codable & Sendable>(_ value: V, at name: String) async throws {
    try await base.write(value, at: name)
    counter.add()
  }

  func remove(at name: String) async throws { try await base.remove(at: name) }

  func removeAll() async throws { try await base.removeAll() }
}

/// `measurement` with every time and allocation count multiplied by `factor` (per change to per second).
func scaled(_ measurement: Measurement, by factor: Double) -> Measurement {
  Measurement(
    nanoseconds: measurement.nanoseconds * factor, allocations: measurement.allocations.map { $0 * factor },
    rounds: measurement.rounds.map { $0 * factor })
}

/// The process's CPU time so far, every thread, in nanoseconds.
func processCPUNanoseconds() -> Double {
  var time = timespec()
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
  return Double(time.tv_sec) * 1e9 + Double(time.tv_nsec)
}

/// `measureSideBySide`, measuring in each round both the wall-clock time and the process's CPU time of each body.
@MainActor
func measureWallAndCPU(
  operations: Int, rounds: Int = Bench.rounds, _ bodies: [@MainActor () async -> Void]
) async -> (wall: [Measurement], cpu: [Measurement]) {
  for body in bodies { await body() }  // warm-up
  let clock = ContinuousClock()
  var wallSamples = Array(repeating: [Double](), count: bodies.count)
  var cpuSamples = Array(repeating: [Double](), count: bodies.count)
  for round in 0..<rounds {
    for offset in bodies.indices {
      let index = (round + offset) % bodies.count
      let cpuStart = processCPUNanoseconds()
      let start = clock.now
      await bodies[index]()
      let elapsed = start.duration(to: clock.now)
      let cpu = processCPUNanoseconds() - cpuStart
      let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
      wallSamples[index].append(nanoseconds / Double(operations))
      cpuSamples[index].append(cpu / Double(operations))
    }
  }
  var wall: [Measurement] = []
  var cpu: [Measurement] = []
  for index in bodies.indices {
    let allocations = await countAllocations(operations: operations, bodies[index])
    let sortedWall = wallSamples[index].sorted()
    let sortedCPU = cpuSamples[index].sorted()
    wall.append(
      Measurement(nanoseconds: sortedWall[sortedWall.count / 2], allocations: allocations, rounds: wallSamples[index]))
    cpu.append(
      Measurement(nanoseconds: sortedCPU[sortedCPU.count / 2], allocations: allocations, rounds: cpuSamples[index]))
  }
  return (wall, cpu)
}

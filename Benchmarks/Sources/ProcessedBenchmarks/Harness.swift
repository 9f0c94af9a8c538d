import MallocInterposerSwift

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A measured figure: nanoseconds per operation (median of several rounds) and allocations per operation.
struct Measurement {
  var nanoseconds: Double
  var allocations: Double?
  /// Nanoseconds per operation in each round, in round order (rounds are shared by bodies measured side by side).
  var rounds: [Double] = []

  /// This measurement over `baseline`: the median of the per-round ratios when both were measured side by side
  /// (each round's ratio compares runs made moments apart, so the machine's drift cancels out), else the ratio of
  /// the medians.
  func ratio(to baseline: Measurement) -> Double {
    guard !rounds.isEmpty, rounds.count == baseline.rounds.count else { return nanoseconds / baseline.nanoseconds }
    let ratios = zip(rounds, baseline.rounds).map { $0 / $1 }.sorted()
    return ratios[ratios.count / 2]
  }
}

/// Times several bodies (each performing `operations` operations) in the same rounds and returns each one's median
/// per operation.
///
/// Every round runs every body once, in an order that rotates from round to round, so that a baseline and the code
/// compared with it see the same machine: drift in the CPU's speed or the heap's state over the run falls on all of
/// them alike.
@MainActor
func measureSideBySide(
  operations: Int, rounds: Int = Bench.rounds, _ bodies: [@MainActor () async -> Void]
) async -> [Measurement] {
  for body in bodies { await body() }  // warm-up
  let clock = ContinuousClock()
  var samples = Array(repeating: [Double](), count: bodies.count)
  for round in 0..<rounds {
    for offset in bodies.indices {
      let index = (round + offset) % bodies.count
      let start = clock.now
      await bodies[index]()
      let elapsed = start.duration(to: clock.now)
      let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
      samples[index].append(nanoseconds / Double(operations))
    }
  }
  var results: [Measurement] = []
  for index in bodies.indices {
    let sorted = samples[index].sorted()
    let allocations = await countAllocations(operations: operations, bodies[index])
    results.append(
      Measurement(nanoseconds: sorted[sorted.count / 2], allocations: allocations, rounds: samples[index]))
  }
  return results
}

/// Mallocs per operation while `body` runs, when the malloc interposer is preloaded (`run.sh` does that).
@MainActor
func countAllocations(operations: Int, _ body: @MainActor () async -> Void) async -> Double? {
  guard Bench.interposerLoaded else { return nil }
  MallocInterposerSwift.initialize()
  MallocInterposerSwift.hook()
  await body()
  MallocInterposerSwift.unhook()
  return Double(MallocInterposerSwift.getStatistics().mallocCount) / Double(operations)
}

/// Heap bytes each object made by `make` keeps alive: `count` objects are made and kept while the malloc interposer
/// counts requested bytes, and the bytes still allocated are divided by `count`. `nil` without the interposer.
@MainActor
func heapBytesPerObject<T>(count: Int = 10_000, _ make: @MainActor () -> T) -> Double? {
  guard Bench.interposerLoaded else { return nil }
  var objects: [T] = []
  objects.reserveCapacity(count)
  MallocInterposerSwift.initialize()
  MallocInterposerSwift.hook()
  for _ in 0..<count { objects.append(make()) }
  MallocInterposerSwift.unhook()
  let statistics = MallocInterposerSwift.getStatistics()
  withExtendedLifetime(objects) {}
  return Double(statistics.mallocBytesCount - statistics.freeBytesCount) / Double(count)
}

/// Heap bytes (and allocations) that `body(index)` keeps allocated, per call, over `count` calls made while the
/// malloc interposer counts; the caller keeps what each call made. `nil` without the interposer.
@MainActor
func heapBytesPerCall(_ count: Int, _ body: @MainActor (Int) -> Void) -> (bytes: Double, description: String)? {
  guard Bench.interposerLoaded else { return nil }
  MallocInterposerSwift.initialize()
  MallocInterposerSwift.hook()
  for index in 0..<count { body(index) }
  MallocInterposerSwift.unhook()
  let statistics = MallocInterposerSwift.getStatistics()
  let bytes = Double(statistics.mallocBytesCount - statistics.freeBytesCount) / Double(count)
  let allocations = Double(statistics.mallocCount - statistics.freeCount) / Double(count)
  return (bytes, "\(fixed(bytes, 0)) B (\(fixed(allocations, 1)) live allocations)")
}

/// Settings and the results table.
@MainActor
enum Bench {
  static var rounds = 15
  static var interposerLoaded = false

  struct Row {
    let group: String
    let name: String
    let ours: Measurement
    let baselineName: String
    let baseline: Measurement
    let target: String
    let meetsTarget: Bool?
  }

  static var rows: [Row] = []
  static var absolute: [(name: String, value: String, target: String, meets: Bool?)] = []

  static func record(
    _ group: String, _ name: String, ours: Measurement, against baselineName: String, _ baseline: Measurement,
    target: String = "", maxRatio: Double? = nil, minSpeedup: Double? = nil
  ) {
    let ratio = ours.ratio(to: baseline)
    var meets: Bool?
    if let maxRatio { meets = ratio <= maxRatio }
    if let minSpeedup { meets = 1 / ratio >= minSpeedup }
    rows.append(
      Row(
        group: group, name: name, ours: ours, baselineName: baselineName, baseline: baseline,
        target: target, meetsTarget: meets))
    print(
      "\(name.padded(36)) \(fixed(ours.nanoseconds, 1).leftPadded(10)) ns  vs \(baselineName.padded(30)) "
        + "\(fixed(baseline.nanoseconds, 1).leftPadded(10)) ns  ratio \(fixed(ratio, 2).leftPadded(6))  "
        + "allocs \(ours.allocations.map { fixed($0, 2) } ?? "n/a")/\(baseline.allocations.map { fixed($0, 2) } ?? "n/a")"
        + "  \(target) \(meets.map { $0 ? "ok" : "MISSED" } ?? "")")
  }
}

/// `value` with `digits` decimals.
func fixed(_ value: Double, _ digits: Int) -> String {
  var scale = 1.0
  for _ in 0..<digits { scale *= 10 }
  let rounded = (value * scale).rounded() / scale
  var text = "\(rounded)"
  if let dot = text.firstIndex(of: ".") {
    let decimals = text.distance(from: dot, to: text.endIndex) - 1
    if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
    if digits == 0 { text = String(text[..<dot]) }
  }
  return text
}

extension String {
  func padded(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
  func leftPadded(_ width: Int) -> String {
    count >= width ? self : String(repeating: " ", count: width - count) + self
  }
}

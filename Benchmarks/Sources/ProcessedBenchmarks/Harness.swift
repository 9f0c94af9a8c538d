import MallocInterposerSwift

/// A measured figure: nanoseconds per operation (median of several rounds) and allocations per operation.
struct Measurement {
  var nanoseconds: Double
  var allocations: Double?
}

/// Times `body` (which performs `operations` operations) over several rounds and returns the median per operation.
@MainActor
func measure(
  operations: Int, rounds: Int = Bench.rounds, _ body: @MainActor () async -> Void
) async -> Measurement {
  await body()  // warm-up
  let clock = ContinuousClock()
  var samples: [Double] = []
  for _ in 0..<rounds {
    let start = clock.now
    await body()
    let elapsed = start.duration(to: clock.now)
    let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    samples.append(nanoseconds / Double(operations))
  }
  samples.sort()
  let allocations = await countAllocations(operations: operations, body)
  return Measurement(nanoseconds: samples[samples.count / 2], allocations: allocations)
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
    let ratio = ours.nanoseconds / baseline.nanoseconds
    var meets: Bool?
    if let maxRatio { meets = ratio <= maxRatio }
    if let minSpeedup { meets = baseline.nanoseconds / ours.nanoseconds >= minSpeedup }
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

import Processed

/// A `CacheStorage` in memory that counts what the cache asks of it, can fail reads and writes by name, and can hold
/// reads at a gate until the test opens it.
actor MemoryStorage: CacheStorage {
  struct Failure: Error, Equatable {
    let name: String
  }

  /// The records, by name.
  private(set) var records: [String: any Sendable] = [:]
  /// Every call, in order: "read a", "write a 1", "remove a", "removeAll".
  private(set) var log: [String] = []
  /// Names whose reads throw, whose writes (and removes) throw.
  var failingReads: Set<String> = []
  var failingWrites: Set<String> = []
  /// Reads hold here while the gate is closed.
  private var readsHeld = false
  private var heldReads: [CheckedContinuation<Void, Never>] = []
  private var arrivals: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

  init(_ records: [String: any Sendable] = [:]) {
    self.records = records
  }

  var reads: Int { log.filter { $0.hasPrefix("read ") }.count }
  var writes: [String] { log.filter { $0.hasPrefix("write ") } }

  func read<V: Codable & Sendable>(_ type: V.Type, at name: String) async throws -> V? {
    log.append("read \(name)")
    if readsHeld {
      await withCheckedContinuation { continuation in
        heldReads.append(continuation)
        resumeArrivals()
      }
    }
    if failingReads.contains(name) { throw Failure(name: name) }
    guard let record = records[name] else { return nil }
    guard let value = record as? V else { throw Failure(name: name) }  // undecodable
    return value
  }

  func write<V: Codable & Sendable>(_ value: V, at name: String) async throws {
    log.append("write \(name) \(value)")
    if failingWrites.contains(name) { throw Failure(name: name) }
    records[name] = value
  }

  func remove(at name: String) async throws {
    log.append("remove \(name)")
    if failingWrites.contains(name) { throw Failure(name: name) }
    records[name] = nil
  }

  func removeAll() async throws {
    log.append("removeAll")
    records = [:]
  }

  func set(_ value: any Sendable, at name: String) { records[name] = value }
  func failReads(of name: String) { failingReads.insert(name) }
  func failWrites(of name: String) { failingWrites.insert(name) }

  /// Reads wait from now until ``openReads()``.
  func holdReads() { readsHeld = true }

  /// Returns once `count` reads wait at the gate.
  func untilReadsHeld(_ count: Int) async {
    if heldReads.count >= count { return }
    await withCheckedContinuation { arrivals.append((count, $0)) }
  }

  func openReads() {
    readsHeld = false
    let held = heldReads
    heldReads = []
    for read in held { read.resume() }
  }

  private func resumeArrivals() {
    let ready = arrivals.filter { heldReads.count >= $0.count }
    arrivals.removeAll { heldReads.count >= $0.count }
    for arrival in ready { arrival.continuation.resume() }
  }
}

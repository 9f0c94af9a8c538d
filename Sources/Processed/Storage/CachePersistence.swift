/// A cache's side of its ``CacheStorage``: reads, coalesced writes and removals of records, off the main actor and in
/// order per name, and the ``StorageEvent``s they make.
///
/// Bookkeeping is on the main actor; each storage call runs in a detached task that first awaits the name's previous
/// operation (``Record/tail``) and the last `removeAll` (``barrier``), so operations on one name land in the order
/// they were asked for. Writes are leading and then coalesced: the first change of a name is written at once, later
/// ones at most once per ``writeInterval`` on the cache's clock, with the last value. See Documentation/Cache.md.
@usableFromInline @MainActor
final class CachePersistence {
  /// One name's writes.
  final class Record {
    /// When the last write of the name was started, on the cache's clock.
    var lastWrite: Duration?
    /// The write waiting for the interval to pass (the last value wins).
    var pending: (@Sendable (any CacheStorage) async throws -> Void)?
    /// The timer that performs ``pending``.
    var timer: Task<Void, Never>?
    /// The name's last storage operation while it runs: the next one waits for it. Cleared when it ends.
    var tail: Task<Void, Never>?
    /// Which operation ``tail`` is.
    var tailID: UInt64 = 0
  }

  static let writeInterval: Duration = .seconds(1)

  let storage: any CacheStorage
  let events: AsyncStream<StorageEvent>.Continuation
  let clock: CacheClock
  private var records: [String: Record] = [:]
  /// The last `removeAll`: every later operation waits for it.
  private var barrier: Task<Void, Never>?
  private var lastOperationID: UInt64 = 0

  nonisolated init(storage: any CacheStorage, events: AsyncStream<StorageEvent>.Continuation, clock: CacheClock) {
    self.storage = storage
    self.events = events
    self.clock = clock
  }

  /// How many names the table holds (names with a write pending, running, or in their interval).
  var recordCount: Int { records.count }

  // MARK: Reading

  /// The record of `key`, after every operation asked for its name before; `nil` when there is none, or when it could
  /// not be read or decoded (reported as `.dropped` and removed).
  func read<Value>(_ key: KeyPersistence<Value>) async -> Value? {
    let name = key.name
    // A write still waiting for its interval goes first: the read sees the last value written.
    if let record = records[name], record.pending != nil {
      record.timer?.cancel()
      writePending(of: name)
    }
    let previous = records[name]?.tail ?? barrier
    let storage = self.storage
    let read = Task.detached { () -> Result<Value?, any Error> in
      await previous?.value
      do {
        return .success(try await key.read(storage))
      } catch {
        return .failure(error)
      }
    }
    switch await read.value {
    case .success(let value):
      return value
    case .failure(let error):
      events.yield(.dropped(name, error))
      perform({ try await $0.remove(at: name) }, for: name, in: record(name))
      return nil
    }
  }

  // MARK: Writing

  /// `value` was written to the entry of `key` by a fetch or `set`: stored at once when the name was not written in
  /// the last interval, else when the interval is over (the last value wins).
  func write<Value>(_ value: Value, for key: KeyPersistence<Value>) {
    let name = key.name
    let record = record(name)
    let write: @Sendable (any CacheStorage) async throws -> Void = { try await key.write($0, value) }
    let now = clock.now()
    if record.timer == nil, record.lastWrite.map({ now - $0 >= Self.writeInterval }) ?? true {
      record.lastWrite = now
      perform(write, for: name, in: record)
      return
    }
    record.pending = write
    guard record.timer == nil, let last = record.lastWrite else { return }
    let clock = self.clock
    // One of the cache's own timers (never a sleeper for `waitForSleepers`); it holds the persistence until it fires.
    record.timer = Task { [self] in
      do {
        try await HousekeepingSleep.$isActive.withValue(true) { try await clock.sleep(last + Self.writeInterval) }
      } catch { return }
      writePending(of: name)
    }
  }

  /// The interval of `name` is over: its pending write is stored.
  private func writePending(of name: String) {
    guard let record = records[name] else { return }
    record.timer = nil
    guard let pending = record.pending else { return }
    record.pending = nil
    record.lastWrite = clock.now()
    perform(pending, for: name, in: record)
  }

  /// The record of `name` is removed (after the name's earlier operations); a pending write is dropped.
  func remove(_ name: String) {
    let record = record(name)
    record.timer?.cancel()
    record.timer = nil
    record.pending = nil
    perform({ try await $0.remove(at: name) }, for: name, in: record)
  }

  /// Every record is removed, after every operation asked for before; pending writes are dropped.
  func removeAll() {
    let earlier = records.values.compactMap { record -> Task<Void, Never>? in
      record.timer?.cancel()
      return record.tail
    }
    let previous = barrier
    records = [:]
    let (storage, events) = (self.storage, self.events)
    barrier = Task.detached {
      await previous?.value
      for operation in earlier { await operation.value }
      do {
        try await storage.removeAll()
      } catch {
        events.yield(.writeFailed("", error))
      }
    }
  }

  /// Performs every pending write now and returns when the storage has every operation asked for so far.
  func flush() async {
    for (name, record) in records where record.pending != nil {
      record.timer?.cancel()
      writePending(of: name)
    }
    let operations = records.values.compactMap(\.tail) + (barrier.map { [$0] } ?? [])
    for operation in operations { await operation.value }
    for (name, record) in records { forgetIfIdle(name, record) }
  }

  /// The cache went: pending writes are performed (releasing a cache never loses a written value), and the events
  /// end once every operation has.
  func close() {
    for (name, record) in records where record.pending != nil {
      record.timer?.cancel()
      writePending(of: name)
    }
    let operations = records.values.compactMap(\.tail) + (barrier.map { [$0] } ?? [])
    let events = self.events
    Task.detached {
      for operation in operations { await operation.value }
      events.finish()
    }
  }

  // MARK: Operations

  private func record(_ name: String) -> Record {
    if let record = records[name] { return record }
    let made = Record()
    records[name] = made
    return made
  }

  /// Runs `operation` off the main actor after the name's previous operation; a failure is reported as
  /// `.writeFailed`.
  private func perform(
    _ operation: @escaping @Sendable (any CacheStorage) async throws -> Void, for name: String, in record: Record
  ) {
    let previous = record.tail ?? barrier
    let (storage, events) = (self.storage, self.events)
    lastOperationID &+= 1
    let id = lastOperationID
    record.tailID = id
    record.tail = Task.detached { [self] in
      await previous?.value
      do {
        try await operation(storage)
      } catch {
        events.yield(.writeFailed(name, error))
      }
      await operationEnded(id, of: name)
    }
  }

  /// Operation `id` of `name` ended: the name keeps no finished task (so `flush` waits only for what runs), and a name
  /// with nothing pending whose interval is over is forgotten (the table holds the names written in the last second).
  private func operationEnded(_ id: UInt64, of name: String) {
    guard let record = records[name], record.tailID == id else { return }
    record.tail = nil
    forgetIfIdle(name, record)
  }

  private func forgetIfIdle(_ name: String, _ record: Record) {
    guard record.tail == nil, record.pending == nil, record.timer == nil else { return }
    if let last = record.lastWrite, clock.now() - last < Self.writeInterval { return }
    records[name] = nil
  }
}

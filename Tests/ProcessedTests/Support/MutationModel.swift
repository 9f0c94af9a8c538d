import Processed

/// How a mutation's operation ends in `LoadCacheMutationModelTests`.
enum MutationOutcome: Equatable, CustomStringConvertible {
  /// The operation returns (the mutation succeeds).
  case returned
  /// The operation throws ``MutationRejected``.
  case rejected
  /// The mutation's task is cancelled and the operation throws `CancellationError`.
  case cancelled

  var description: String {
    switch self {
    case .returned: "succeeds"
    case .rejected: "fails"
    case .cancelled: "is cancelled"
    }
  }
}

/// The error a rejected mutation's operation throws: its id, so every failure is told apart.
struct MutationRejected: Error, Equatable {
  let id: Int
}

/// The reference model of `LoadCacheMutationModelTests`: the rules of SPEC Phase 3 "Shared cache" for fetches, `set`,
/// `invalidate`, `remove` and `mutate` (with its precise rules), written as plainly as possible. Keys, states,
/// fetches and mutations are indices.
///
/// Values are lists, so that what a key shows tells where it came from: a fetch `f` answers `[10_000 + f]`, `set`
/// writes `[20_000 + n]`, and mutation `m`'s update appends `30_000 + m`. What a key shows while mutations run is its
/// base (the last value a fetch or `set` wrote) followed by the updates of the mutations that have not failed, in the
/// order they started — so a rollback to a snapshot, a lost update or a fetch that wrote during a mutation all show.
struct MutationModel {
  struct Entry {
    var value: [Int]?
    var lastError: Int?
    var invalidated = false
    /// The fetch that may still write.
    var inFlight: Int?
    /// The bound states, in the order they were bound.
    var bound: [Int] = []

    var exists: Bool { value != nil || lastError != nil || !bound.isEmpty || inFlight != nil }
  }

  /// The mutations of a key that have not all ended, from the first one's start until the last one ends (or
  /// `remove`/`removeAll` detach them).
  struct Log {
    let key: Int
    /// The last value a fetch or `set` wrote; `nil` when the key had no value when the first mutation started.
    var base: [Int]?
    /// The mutations that have not failed, in start order, and whether their update applies (it does not for one
    /// that started while the log had no base).
    var applied: [(mutation: Int, applies: Bool)] = []
    var running = 0
    var detached = false
  }

  enum Phase: Equatable {
    case running
    case ended(MutationOutcome)
  }

  struct Mutation {
    let key: Int
    let log: Int
    /// Whether its update applies: not when its key had no value (its `update` is never called).
    let applies: Bool
    var phase: Phase = .running
  }

  var entries: [Entry]
  var shown: [LoadableState<[Int]>]
  var boundKey: [Int?]
  var logs: [Log] = []
  /// The log of each key with running mutations.
  var attached: [Int: Int] = [:]
  var mutations: [Mutation] = []
  /// The fetches the current operation started: (fetch id, key).
  var started: [(id: Int, key: Int)] = []
  /// The mutations whose calls end in the current operation.
  var ended: [Int] = []
  private var nextFetch = 0

  init(keys: Int, states: Int) {
    entries = Array(repeating: Entry(), count: keys)
    shown = Array(repeating: .absent, count: states)
    boundKey = Array(repeating: nil, count: states)
  }

  var count: Int { entries.filter(\.exists).count }

  static func update(_ mutation: Int) -> Int { 30_000 + mutation }
  static func fetched(_ fetch: Int) -> [Int] { [10_000 + fetch] }

  mutating func begin() {
    started = []
    ended = []
  }

  /// An entry that holds nothing and has no bound state or fetch is gone.
  mutating func end() {
    for key in entries.indices where !entries[key].exists { entries[key] = Entry() }
  }

  private mutating func deliver(_ key: Int, _ state: LoadableState<[Int]>) {
    for bound in entries[key].bound { shown[bound] = state }
  }

  private mutating func unbind(_ state: Int) {
    guard let key = boundKey[state] else { return }
    boundKey[state] = nil
    entries[key].bound.removeAll { $0 == state }
    // Every bound state waits for the entry's fetch: it is cancelled once none is bound.
    if entries[key].bound.isEmpty { entries[key].inFlight = nil }
  }

  private mutating func startFetch(_ key: Int) {
    entries[key].inFlight = nextFetch
    started.append((nextFetch, key))
    nextFetch += 1
  }

  // MARK: States

  /// A cached `load` (or `refresh`) of `key` by `state`; `stale`: the call's `staleTime` is zero.
  mutating func load(_ state: Int, key: Int, silently: Bool, stale: Bool, refreshing: Bool) {
    if boundKey[state] == key {
      entries[key].bound.removeAll { $0 == state }  // binds again, last, without cancelling the fetch
    } else {
      unbind(state)
    }
    entries[key].bound.append(state)
    boundKey[state] = key
    let entry = entries[key]
    if let value = entry.value { shown[state] = .loaded(value) }
    if !refreshing, !stale, entry.value != nil, !entry.invalidated { return }  // fresh: the clock never moves
    if entry.value == nil, !silently { shown[state] = .loading }
    if refreshing || entry.inFlight == nil { startFetch(key) }
  }

  mutating func cancel(_ state: Int) { unbind(state) }

  // MARK: Fetches

  /// Fetch `id` of `key` ends with `result`. Returns whether it could write (it was not superseded); one that ends
  /// while a mutation of its key runs is dropped, writing nothing.
  @discardableResult
  mutating func finishFetch(_ id: Int, key: Int, with result: Result<[Int], CacheModelFailure>) -> Bool {
    guard entries[key].inFlight == id else { return false }
    entries[key].inFlight = nil
    if attached[key] != nil { return true }
    switch result {
    case .success(let value):
      entries[key].value = value
      entries[key].lastError = nil
      entries[key].invalidated = false
      deliver(key, .loaded(value))
    case .failure(let error):
      entries[key].lastError = error.code
      if entries[key].value == nil { deliver(key, .error(error)) }
    }
    return true
  }

  // MARK: The cache

  mutating func set(_ key: Int, _ value: [Int]) {
    entries[key].inFlight = nil
    var written = value
    if let log = attached[key] {
      logs[log].base = value
      written = shownValue(log) ?? value
    }
    entries[key].value = written
    entries[key].lastError = nil
    entries[key].invalidated = false
    deliver(key, .loaded(written))
  }

  mutating func invalidate(_ key: Int) {
    guard entries[key].exists else { return }
    entries[key].invalidated = true
    if !entries[key].bound.isEmpty { startFetch(key) }
  }

  mutating func remove(_ key: Int) {
    if let log = attached.removeValue(forKey: key) { logs[log].detached = true }
    for state in entries[key].bound { boundKey[state] = nil }
    entries[key] = Entry()
  }

  // MARK: Mutations

  private func shownValue(_ log: Int) -> [Int]? {
    logs[log].base.map { base in base + logs[log].applied.filter(\.applies).map { Self.update($0.mutation) } }
  }

  private mutating func show(_ log: Int) {
    let key = logs[log].key
    guard !logs[log].detached, let value = shownValue(log), entries[key].exists else { return }
    entries[key].value = value
    deliver(key, .loaded(value))
  }

  /// Starts a mutation of `key`; returns its id.
  mutating func startMutation(_ key: Int) -> Int {
    let log: Int
    if let running = attached[key] {
      log = running
    } else {
      log = logs.count
      logs.append(Log(key: key, base: entries[key].value))
      attached[key] = log
    }
    let id = mutations.count
    mutations.append(Mutation(key: key, log: log, applies: logs[log].base != nil))
    logs[log].applied.append((id, logs[log].base != nil))
    logs[log].running += 1
    show(log)
    return id
  }

  mutating func finishMutation(_ id: Int, _ outcome: MutationOutcome) {
    let log = mutations[id].log
    logs[log].running -= 1
    // Spec: "`mutate` returns (or throws) as soon as its own operation ends, whatever other mutations of the key do.
    // A succeeded mutation's update stays applied until the end-of-mutations invalidation's fetch replaces it."
    mutations[id].phase = .ended(outcome)
    ended.append(id)
    if outcome != .returned {
      logs[log].applied.removeAll { $0.mutation == id }
      show(log)
    }
    if logs[log].running == 0 { endLog(log) }
  }

  /// The last running mutation of the log ended: the updates go, and the key is invalidated once (unless `remove`
  /// detached the log).
  private mutating func endLog(_ log: Int) {
    logs[log].applied = []
    guard !logs[log].detached else { return }
    attached[logs[log].key] = nil
    invalidate(logs[log].key)
  }

  var running: [Int] { mutations.indices.filter { mutations[$0].phase == .running } }
  /// Mutations that returned while others of their key still run: their updates stay applied.
  var succeeded: [Int] {
    mutations.indices.filter { id in
      mutations[id].phase == .ended(.returned) && logs[mutations[id].log].running > 0
    }
  }
}

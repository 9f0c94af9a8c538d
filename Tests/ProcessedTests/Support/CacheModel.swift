import Processed

/// The error the cache model test's fetches throw: its code is the fetch's id, so every failure is told apart.
struct CacheModelFailure: Error, Equatable, Sendable, CustomStringConvertible {
  let code: Int

  var description: String { "CacheModelFailure(\(code))" }
}

/// The reference model of `LoadCacheModelTests`: plain Swift, the rules of SPEC Phase 3 "Shared cache" as simply as
/// they can be written. Keys and states are indices; a fetch is a model id the runner maps to the script's.
///
/// Per key: value, last error, when it was written, whether it was invalidated, the fetch in flight, the bound
/// states in order, the call whose block an invalidation runs, and since when the entry is idle (for collection).
/// Per state: what it shows, the key it is bound to, whether it waits for that key's fetch, and its plain load.
struct CacheModel {
  struct Entry {
    var value: Int?
    var lastError: Int?
    var writtenAt: Duration = .zero
    var invalidated = false
    /// The model id of the fetch that may still write.
    var inFlight: Int?
    var bound: [Int] = []
    /// The call whose block an invalidation runs: the last fetch's, or the last binding call's before any fetch.
    var lastOrigin: Int?
    var hasFetched = false
    var idleSince: Duration?

    var exists: Bool { value != nil || lastError != nil || !bound.isEmpty || inFlight != nil }
    var isIdle: Bool { bound.isEmpty && inFlight == nil }
  }

  struct StateModel {
    var shown: LoadableState<Int> = .absent
    var key: Int?
    var waiting = false
    /// The model id of the state's own (uncached) load that may still write.
    var plainLoad: Int?
    /// Whether the current operation wrote `.loading` to the state.
    var wroteLoading = false
  }

  /// A fetch the model expects to start: the key (nil: a state's plain load) and the call whose block it runs.
  struct Start: Equatable {
    let id: Int
    let key: Int?
    let origin: Int
    let state: Int?
  }

  let staleTime: Duration
  let gcTime: Duration
  var now: Duration = .zero
  var entries: [Entry]
  var states: [StateModel]
  /// The fetches started by the current operation.
  var started: [Start] = []
  /// The states the current operation's entry write reached, in order, and what it wrote.
  var delivered: [Int] = []
  var deliveredState: LoadableState<Int>?
  private var nextID = 0

  init(keys: Int, states: Int, staleTime: Duration, gcTime: Duration) {
    self.staleTime = staleTime
    self.gcTime = gcTime
    entries = Array(repeating: Entry(), count: keys)
    self.states = Array(repeating: StateModel(), count: states)
  }

  var count: Int { entries.filter(\.exists).count }

  /// Starts an operation: forgets the previous one's starts and `.loading` writes.
  mutating func begin() {
    started = []
    delivered = []
    deliveredState = nil
    for index in states.indices { states[index].wroteLoading = false }
  }

  /// Ends an operation: an entry that holds nothing is gone; an idle one records since when.
  mutating func end() {
    for key in entries.indices {
      if !entries[key].exists {
        entries[key] = Entry()
      } else if !entries[key].isIdle {
        entries[key].idleSince = nil
      } else if entries[key].idleSince == nil {
        entries[key].idleSince = now
      }
    }
  }

  private mutating func write(_ state: Int, _ shown: LoadableState<Int>) {
    states[state].shown = shown
    if shown == .loading { states[state].wroteLoading = true }
  }

  /// The state leaves its entry: once no bound state waits, the fetch is cancelled (the entry stays as it was). Every
  /// bound state waits for the entry's fetch (precise rules), so that is once no state is bound.
  private mutating func unbind(_ state: Int) {
    states[state].waiting = false
    guard let key = states[state].key else { return }
    states[state].key = nil
    entries[key].bound.removeAll { $0 == state }
    if entries[key].inFlight != nil, entries[key].bound.isEmpty {
      entries[key].inFlight = nil
    }
  }

  private mutating func startFetch(_ key: Int, origin: Int) {
    let id = nextID
    nextID += 1
    entries[key].inFlight = id
    entries[key].lastOrigin = origin
    entries[key].hasFetched = true
    for state in entries[key].bound { states[state].waiting = true }
    started.append(Start(id: id, key: key, origin: origin, state: nil))
  }

  /// Whether a `load` of `key` with `callStaleTime` would be a fresh hit.
  func isFresh(_ key: Int, staleTime callStaleTime: Duration?) -> Bool {
    let entry = entries[key]
    return entry.value != nil && !entry.invalidated && now - entry.writtenAt < (callStaleTime ?? staleTime)
  }

  // MARK: Operations

  /// A cached `load` (or `refresh`) of `key` by `state`, made by call `call`. Returns whether it was a fresh hit.
  @discardableResult
  mutating func load(
    _ state: Int, key: Int, call: Int, staleTime callStaleTime: Duration?, silently: Bool, refreshing: Bool
  ) -> Bool {
    states[state].plainLoad = nil
    if states[state].key == key {
      entries[key].bound.removeAll { $0 == state }  // binds again, last, without cancelling the fetch
      states[state].waiting = false
    } else {
      unbind(state)
    }
    entries[key].bound.append(state)
    states[state].key = key
    if !entries[key].hasFetched { entries[key].lastOrigin = call }
    let entry = entries[key]
    let fresh = !refreshing && isFresh(key, staleTime: callStaleTime)
    if let value = entry.value { write(state, .loaded(value)) }
    if fresh { return true }
    if entry.value == nil, !silently { write(state, .loading) }
    states[state].waiting = true
    if refreshing || entry.inFlight == nil { startFetch(key, origin: call) }
    return false
  }

  mutating func cancel(_ state: Int) {
    states[state].plainLoad = nil
    unbind(state)
  }

  mutating func reset(_ state: Int) {
    cancel(state)
    write(state, .absent)
  }

  mutating func manualWrite(_ state: Int, _ value: Int) {
    cancel(state)
    write(state, .loaded(value))
  }

  mutating func plainLoad(_ state: Int, call: Int) {
    unbind(state)
    let id = nextID
    nextID += 1
    states[state].plainLoad = id
    write(state, .loading)
    started.append(Start(id: id, key: nil, origin: call, state: state))
  }

  mutating func set(_ key: Int, _ value: Int) {
    entries[key].inFlight = nil
    entries[key].value = value
    entries[key].lastError = nil
    entries[key].writtenAt = now
    entries[key].invalidated = false
    deliveredState = .loaded(value)
    for state in entries[key].bound {
      write(state, .loaded(value))
      delivered.append(state)
      states[state].waiting = false
    }
    if entries[key].isIdle { entries[key].idleSince = now }  // written while idle
  }

  mutating func invalidate(_ key: Int) {
    guard entries[key].exists else { return }
    entries[key].invalidated = true
    if !entries[key].bound.isEmpty, let origin = entries[key].lastOrigin { startFetch(key, origin: origin) }
  }

  mutating func remove(_ key: Int) {
    for state in entries[key].bound {
      states[state].key = nil
      states[state].waiting = false
    }
    entries[key] = Entry()
  }

  mutating func advance(by duration: Duration) {
    now += duration
    for key in entries.indices where entries[key].exists && entries[key].isIdle {
      if let since = entries[key].idleSince, since + gcTime <= now { entries[key] = Entry() }
    }
  }

  /// Fetch `id` ends with `result`. Returns whether it could still write.
  @discardableResult
  mutating func finish(_ id: Int, key: Int?, state: Int?, with result: Result<Int, CacheModelFailure>) -> Bool {
    if let key {
      guard entries[key].inFlight == id else { return false }
      entries[key].inFlight = nil
      switch result {
      case .success(let value):
        entries[key].value = value
        entries[key].lastError = nil
        entries[key].writtenAt = now
        entries[key].invalidated = false
        deliveredState = .loaded(value)
        for bound in entries[key].bound {
          write(bound, .loaded(value))
          delivered.append(bound)
        }
      case .failure(let error):
        entries[key].lastError = error.code
        if entries[key].value == nil {
          deliveredState = .error(error)
          for bound in entries[key].bound {
            write(bound, .error(error))
            delivered.append(bound)
          }
        }
      }
      for bound in entries[key].bound { states[bound].waiting = false }
      return true
    }
    guard let state, states[state].plainLoad == id else { return false }
    states[state].plainLoad = nil
    switch result {
    case .success(let value): write(state, .loaded(value))
    case .failure(let error): write(state, .error(error))
    }
    return true
  }
}

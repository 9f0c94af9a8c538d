import ProcessedTesting
import Testing

@testable import Processed

/// One seeded run of `LoadCacheMutationModelTests`: random mutations, fetches, loads, `set`, `invalidate`,
/// `invalidate(prefix:)`, `remove` and `removeAll` on a `LoadCache` and, side by side, on the reference
/// `MutationModel`; after each operation the run waits for exactly what the model says happens, then compares every
/// state, every key's value and `count`.
@MainActor
final class MutationModelRun {
  /// `("m", 0)`, `("m", 1)`, `("m", 2)` and `("n", 0)`.
  static let keyCount = 4
  static let maxRunning = 5
  /// The situations a default run must reach (see `coverage`).
  static let situations = [
    "mutation of a key with no value", "mutation overlapping another of its key",
    "failure recomputed with other updates applied", "cancelled operation", "success while another mutation runs",
    "last mutation ended with a state bound", "mutation ended after remove", "fetch dropped during a mutation",
    "set during a mutation", "remove during a mutation", "removeAll during a mutation",
  ]

  let seed: UInt64
  let operationCount: Int
  private let tracing: Bool
  private var random: MBRandom
  private let cache = LoadCache(staleTime: .seconds(1_000), clock: TestClock())
  private let states = MutationModelStates()
  private let fetches = MutationFetchScript()
  private let operations = MutationOperationScript()
  private var model = MutationModel(keys: keyCount, states: MutationModelStates.count)

  /// The key and the model's id of each script fetch, by script id (fetches started by one operation may register in
  /// another order than the model's).
  private var fetchKeys: [Int] = []
  private var modelFetchIDs: [Int] = []
  private var pendingFetches: [Int] = []
  private var mutationTasks: [Task<Int, any Error>] = []
  private var loadTasks: [Task<Void, Never>] = []
  private var nextSetValue = 20_000
  /// How often the situations the test is about came up (the suite expects each in a default run).
  private(set) var coverage: [String: Int] = [:]
  private var trace: [String] = []
  private var failed = false
  private var operation = ""
  private var index = 0

  init(seed: UInt64, operations: Int, tracing: Bool) {
    self.seed = seed
    operationCount = operations
    self.tracing = tracing
    random = MBRandom(seed: seed)
  }

  func run() async -> MBOutcome {
    var done = 0
    while done < operationCount, !failed {
      index = done
      model.begin()
      await step()
      model.end()
      await settle()
      done += 1
      await Task.yield()  // one operation per turn of the main actor, so the tests beside it go on
    }
    if !failed { await drain() }
    release()
    return MBOutcome(operations: done, failed: failed)
  }

  static func key(_ index: Int) -> CacheKey<[Int]> {
    index < 3 ? CacheKey("m", index) : CacheKey("n", 0)
  }

  // MARK: Operations

  private func step() async {
    let running = model.running
    let roll = random.below(100)
    switch roll {
    case 0..<18: load(refreshing: false)
    case 18..<24: load(refreshing: true)
    case 24..<28: cancel()
    case 28..<44 where running.count < Self.maxRunning: await startMutation()
    case 44..<64 where !running.isEmpty: await finishMutation(random.pick(running))
    case 64..<66 where !model.succeeded.isEmpty: cancelSucceeded()
    case 66..<82 where !pendingFetches.isEmpty: await finishFetch()
    case 82..<88: set()
    case 88..<93: invalidate()
    case 93..<96: invalidatePrefix()
    case 96..<99: remove()
    case 99: removeAll()
    default: load(refreshing: false)
    }
  }

  private func count(_ situation: String, if condition: Bool = true) {
    if condition { coverage[situation, default: 0] += 1 }
  }

  private func note(_ text: String) {
    operation = text
    trace.append("\(index): \(text)")
    if trace.count > 40 { trace.removeFirst(trace.count - 40) }
    if tracing { print("mutation model-based: \(index): \(text)") }
  }

  private func load(refreshing: Bool) {
    let state = random.below(MutationModelStates.count)
    let key = random.below(Self.keyCount)
    let stale = random.percent(30)
    let silently = !refreshing && random.percent(20)
    note(
      "\(refreshing ? "refresh" : "load") state \(state) key \(key)" + (stale ? " staleTime 0" : "")
        + (silently ? " silently" : ""))
    let block = fetches.block(key: key)
    let options = stale ? LoadOptions(staleTime: .zero) : nil
    loadTasks.append(
      refreshing
        ? states.refresh(state, key: Self.key(key), in: cache, options: options, block: block)
        : states.load(state, key: Self.key(key), in: cache, silently: silently, options: options, block: block))
    model.load(state, key: key, silently: silently, stale: stale, refreshing: refreshing)
  }

  private func cancel() {
    let state = random.below(MutationModelStates.count)
    note("cancel state \(state)")
    states.cancel(state)
    model.cancel(state)
  }

  private func startMutation() async {
    // Half the time a key that has running mutations already, so that they overlap.
    let overlapping = model.attached.keys.sorted()
    let key =
      !overlapping.isEmpty && random.percent(50) ? random.pick(overlapping) : random.below(Self.keyCount)
    let id = mutationTasks.count
    note("start mutation \(id) of key \(key)")
    count("mutation of a key with no value", if: model.entries[key].value == nil)
    count("mutation overlapping another of its key", if: model.attached[key] != nil)
    let gate = operations.add()
    let cache = self.cache
    let operations = self.operations
    let operation = operations.operation(id)
    mutationTasks.append(
      Task { @MainActor in
        let result = try await cache.mutate(
          Self.key(key),
          optimistic: {
            operations.noteUpdated(id)
            $0.append(MutationModel.update(id))
          }, operation: operation)
        operations.noteReturned(id)
        return result
      })
    // The update is shown when `mutate` starts, before the operation waits at its gate.
    await gate.untilWaiting(1)
    if gate.waiting != 1 { return fail("mutation \(id)'s operation never reached its gate") }
    if model.startMutation(key) != id { fail("the model numbered mutation \(id) differently") }
  }

  private func finishMutation(_ id: Int) async {
    let outcome = random.pick([MutationOutcome.returned, .returned, .returned, .rejected, .rejected, .cancelled])
    let log = model.logs[model.mutations[id].log]
    note("mutation \(id) (key \(log.key)) \(outcome)" + (log.detached ? " [removed]" : ""))
    let others = log.applied.contains { $0.mutation != id && $0.applies }
    count("failure recomputed with other updates applied", if: outcome != .returned && others && !log.detached)
    count("cancelled operation", if: outcome == .cancelled)
    count("success while another mutation runs", if: outcome == .returned && log.running > 1)
    count(
      "last mutation ended with a state bound",
      if: log.running == 1 && !log.detached && !model.entries[log.key].bound.isEmpty)
    count("mutation ended after remove", if: log.detached)
    if outcome == .cancelled { mutationTasks[id].cancel() }
    // The cache handles the operation's end in the turn of the main actor in which it signals.
    if !(await operations.finish(id, failing: outcome == .rejected)) {
      return fail("mutation \(id)'s operation did not go on past its gate")
    }
    model.finishMutation(id, outcome)
  }

  /// Cancelling the task of a mutation that returned while others of its key run changes nothing (its update stays).
  private func cancelSucceeded() {
    let id = random.pick(model.succeeded)
    note("cancel the task of succeeded mutation \(id)")
    mutationTasks[id].cancel()
  }

  private func finishFetch() async {
    let id = pendingFetches.remove(at: random.below(pendingFetches.count))
    let key = fetchKeys[id]
    let succeeds = random.percent(80)
    let result: Result<[Int], CacheModelFailure> =
      succeeds ? .success(MutationModel.fetched(id)) : .failure(CacheModelFailure(code: id))
    let live = model.finishFetch(modelFetchIDs[id], key: key, with: result)
    count("fetch dropped during a mutation", if: live && model.attached[key] != nil)
    note(
      "\(succeeds ? "complete" : "fail") fetch \(id) of key \(key)"
        + (live ? (model.attached[key] != nil ? " [during a mutation]" : "") : " [superseded]"))
    if !(await fetches.resume(id, with: result)) { fail("fetch \(id)'s block did not return") }
  }

  private func set() {
    let key = random.below(Self.keyCount)
    let value = nextSetValue
    nextSetValue += 1
    note("set [\(value)] for key \(key)" + (model.attached[key] != nil ? " [during a mutation]" : ""))
    count("set during a mutation", if: model.attached[key] != nil)
    cache.set([value], for: Self.key(key))
    model.set(key, [value])
  }

  private func invalidate() {
    let key = random.below(Self.keyCount)
    note("invalidate key \(key)")
    cache.invalidate(Self.key(key))
    model.invalidate(key)
  }

  private func invalidatePrefix() {
    let choice = random.below(7)
    let matched: [Int]
    switch choice {
    case 0..<3:
      note("invalidate prefix (\"m\", \(choice))")
      cache.invalidate(prefix: "m", choice)
      matched = [choice]
    case 3:
      note("invalidate prefix (\"m\")")
      cache.invalidate(prefix: "m")
      matched = [0, 1, 2]
    case 4:
      note("invalidate prefix (\"n\")")
      cache.invalidate(prefix: "n")
      matched = [3]
    case 5:
      note("invalidate prefix ()")
      cache.invalidate()  // an empty prefix matches every key
      matched = [0, 1, 2, 3]
    default:
      note("invalidateAll")
      cache.invalidateAll()
      matched = [0, 1, 2, 3]
    }
    for key in matched { model.invalidate(key) }
  }

  private func remove() {
    let key = random.below(Self.keyCount)
    note("remove key \(key)" + (model.attached[key] != nil ? " [during a mutation]" : ""))
    count("remove during a mutation", if: model.attached[key] != nil)
    cache.remove(Self.key(key))
    model.remove(key)
  }

  private func removeAll() {
    note("removeAll")
    count("removeAll during a mutation", if: !model.attached.isEmpty)
    cache.removeAll()
    for key in 0..<Self.keyCount { model.remove(key) }
  }

  // MARK: Settling and comparing

  private func settle() async {
    guard !failed else { return }
    // A fetch's block registers once its task runs: the ones the model expects are waited for; one more that ran
    // by now, or registers later (found by the next operation), was not expected.
    let expected = fetchKeys.count + model.started.count
    let registered = await fetches.untilRegistered(expected)
    if !registered || fetches.registrations.count != expected {
      let count = fetches.registrations.count - fetchKeys.count
      return fail("expected \(model.started.count) fetches to start (keys \(model.started.map(\.key))), \(count) did")
    }
    var unmatched = model.started
    for id in fetchKeys.count..<expected {
      let key = fetches.registrations[id].key
      guard let match = unmatched.firstIndex(where: { $0.key == key }) else {
        return fail("an unexpected fetch of key \(key) started")
      }
      modelFetchIDs.append(unmatched.remove(at: match).id)
      fetchKeys.append(key)
      pendingFetches.append(id)
    }
    for id in model.ended { await checkEnded(id) }
    compare()
  }

  /// Mutation `id`'s call ended in this operation: its task ends with the outcome the model gives.
  private func checkEnded(_ id: Int) async {
    guard !failed, case .ended(let outcome) = model.mutations[id].phase else { return }
    let task = mutationTasks[id]
    var result: Result<Int, any Error>?
    let ended = await SafetyLimit.within { result = await task.result }
    guard ended, let result else { return fail("mutation \(id)'s call did not end") }
    switch (outcome, result) {
    case (.returned, .success(let value)) where value == id: break
    case (.rejected, .failure(let error as MutationRejected)) where error.id == id: break
    case (.cancelled, .failure(is CancellationError)): break
    default: fail("mutation \(id) (\(outcome)) ended with \(result)")
    }
  }

  private func compare() {
    guard !failed else { return }
    for id in operations.updated where !model.mutations[id].applies {
      return fail("mutation \(id) started with no value for its key, yet its update was called")
    }
    for state in 0..<MutationModelStates.count {
      let actual = states.state(state)
      let expected = model.shown[state]
      if actual != expected { return fail("state \(state) is \(actual); expected \(expected)") }
      // Written through the state's normal write path: its observers saw it.
      if states.observed[state] != actual {
        return fail("state \(state) is \(actual), but its observers last saw \(states.observed[state])")
      }
    }
    for key in 0..<Self.keyCount {
      let actual = cache.value(for: Self.key(key))
      let expected = model.entries[key].value
      if actual != expected {
        return fail("key \(key)'s value is \(String(describing: actual)); expected \(String(describing: expected))")
      }
    }
    if cache.count != model.count { fail("count is \(cache.count); expected \(model.count)") }
  }

  /// Ends every mutation (successfully) and every fetch still waiting; then every task of the run must end.
  private func drain() async {
    while !failed, !(model.running.isEmpty && pendingFetches.isEmpty) {
      index += 1
      model.begin()
      if let id = model.running.first {
        note("drain: mutation \(id) succeeds")
        if !(await operations.finish(id, failing: false)) { fail("mutation \(id)'s operation did not go on") }
        model.finishMutation(id, .returned)
      } else {
        let id = pendingFetches.removeFirst()
        let result = Result<[Int], CacheModelFailure>.success(MutationModel.fetched(id))
        model.finishFetch(modelFetchIDs[id], key: fetchKeys[id], with: result)
        note("drain: complete fetch \(id)")
        if !(await fetches.resume(id, with: result)) { fail("fetch \(id)'s block did not return") }
      }
      model.end()
      await settle()
    }
    guard !failed else { return }
    let tasks = loadTasks
    let mutations = mutationTasks
    let ended = await SafetyLimit.within {
      for task in tasks { await task.value }
      for task in mutations { _ = await task.result }
    }
    if !ended { fail("a task of the run never ended") }
  }

  /// Opens every gate and resumes every fetch, so that nothing stays parked after a failed run (a leak at exit).
  private func release() {
    operations.openAll()
    fetches.resumeAll()
  }

  private func fail(_ what: String) {
    guard !failed else { return }
    failed = true
    Issue.record(
      """
      mutation model-based: seed \(seed) (0x\(String(seed, radix: 16, uppercase: true))), operation \(index) \
      (\(operation)): \(what)
      last operations:
      \(trace.joined(separator: "\n"))
      """)
  }
}

// MARK: - Scripts

/// The operations of a run's mutations: each waits at a gate of its own until the test finishes it, then signals
/// the test, then (in the same turn of the main actor) returns its id, throws ``MutationRejected`` or — when its task
/// was cancelled — `CancellationError`.
@MainActor
final class MutationOperationScript {
  private(set) var gates: [Gate] = []
  private var failing: Set<Int> = []
  /// The mutations whose `mutate` call has returned.
  private(set) var returned: Set<Int> = []
  private var waiter: (id: Int, continuation: CheckedContinuation<Bool, Never>)?

  /// The gate of the next mutation.
  func add() -> Gate {
    let gate = Gate()
    gates.append(gate)
    return gate
  }

  func operation(_ id: Int) -> @MainActor () async throws -> Int {
    { [self] in
      await gates[id].wait()
      if let waiter, waiter.id == id {
        self.waiter = nil
        waiter.continuation.resume(returning: true)
      }
      try Task.checkCancellation()
      if failing.contains(id) { throw MutationRejected(id: id) }
      return id
    }
  }

  /// Lets mutation `id`'s operation go on (to fail if `failing`), and waits until it has ended; `false` on the
  /// safety limit.
  func finish(_ id: Int, failing: Bool) async -> Bool {
    if failing { self.failing.insert(id) }
    let limit = SafetyLimit.start(.seconds(10)) { [self] in
      guard let waiter = self.waiter else { return }
      self.waiter = nil
      waiter.continuation.resume(returning: false)
    }
    let ended = await withCheckedContinuation {
      waiter = (id, $0)
      gates[id].open()
    }
    limit.cancel()
    return ended
  }

  func noteReturned(_ id: Int) { returned.insert(id) }

  /// The mutations whose `update` was called.
  private(set) var updated: Set<Int> = []

  func noteUpdated(_ id: Int) { updated.insert(id) }

  func openAll() {
    for gate in gates { gate.open() }
  }
}

/// The fetches of a run: each block registers (its id and key) and waits until the test resumes it. It ignores
/// cancellation, like network code that does not cooperate.
@MainActor
final class MutationFetchScript {
  struct Registration {
    let key: Int
    var continuation: CheckedContinuation<Result<[Int], CacheModelFailure>, Never>?
  }

  private(set) var registrations: [Registration] = []
  private var registrationWaiter: (count: Int, continuation: CheckedContinuation<Void, Never>)?
  private var returnWaiter: (id: Int, continuation: CheckedContinuation<Bool, Never>)?

  func block(key: Int) -> @MainActor () async throws -> [Int] {
    { [self] in try await self.run(key: key) }
  }

  private func run(key: Int) async throws -> [Int] {
    let id = registrations.count
    let result = await withCheckedContinuation { continuation in
      registrations.append(Registration(key: key, continuation: continuation))
      if let waiter = registrationWaiter, registrations.count >= waiter.count {
        registrationWaiter = nil
        waiter.continuation.resume()
      }
    }
    // The test goes on once this turn of the main actor is over: after the engine handled the outcome.
    if let waiter = returnWaiter, waiter.id == id {
      returnWaiter = nil
      waiter.continuation.resume(returning: true)
    }
    return try result.get()
  }

  /// Waits until `count` blocks have registered; `false` if that did not happen within the safety limit.
  func untilRegistered(_ count: Int) async -> Bool {
    if registrations.count >= count { return true }
    let limit = SafetyLimit.start(.seconds(10)) { [self] in
      guard let waiter = self.registrationWaiter else { return }
      self.registrationWaiter = nil
      waiter.continuation.resume()
    }
    await withCheckedContinuation { registrationWaiter = (count, $0) }
    limit.cancel()
    return registrations.count >= count
  }

  /// Resumes fetch `id` with `result` and waits until its block has returned; `false` on the safety limit.
  func resume(_ id: Int, with result: Result<[Int], CacheModelFailure>) async -> Bool {
    guard let continuation = registrations[id].continuation else { return false }
    registrations[id].continuation = nil
    let limit = SafetyLimit.start(.seconds(10)) { [self] in
      guard let waiter = self.returnWaiter else { return }
      self.returnWaiter = nil
      waiter.continuation.resume(returning: false)
    }
    let returned = await withCheckedContinuation {
      returnWaiter = (id, $0)
      continuation.resume(returning: result)
    }
    limit.cancel()
    return returned
  }

  func resumeAll() {
    for id in registrations.indices {
      registrations[id].continuation?.resume(returning: .failure(CacheModelFailure(code: -1)))
      registrations[id].continuation = nil
    }
  }
}

// MARK: - Subjects

@MainActor
final class MutationModelScreen {
  @Loadable var items: LoadableState<[Int]>
}

@MainActor
final class MutationModelKeyPaths: LoadableSupport, ObservableModel {
  let observers = ObserverRegistry()
  var items: LoadableState<[Int]> = .absent
}

/// The bound states: three wrappers, then a key path of a `LoadableSupport` model; each with an observer that keeps
/// the last state it was given.
@MainActor
final class MutationModelStates {
  static let wrappers = 3
  static let count = 4
  let screens = (0..<wrappers).map { _ in MutationModelScreen() }
  let model = MutationModelKeyPaths()
  private(set) var observed = Array(repeating: LoadableState<[Int]>.absent, count: count)
  private var tokens: [ObservationToken] = []

  init() {
    for index in 0..<Self.count {
      let record: @MainActor (LoadableState<[Int]>) -> Void = { [weak self] in self?.observed[index] = $0 }
      tokens.append(
        index < Self.wrappers ? screens[index].$items.observe(record) : model.observe(\.items, record))
    }
  }

  func state(_ index: Int) -> LoadableState<[Int]> {
    index < Self.wrappers ? screens[index].items : model.items
  }

  func load(
    _ index: Int, key: CacheKey<[Int]>, in cache: LoadCache, silently: Bool, options: LoadOptions?,
    block: @escaping @MainActor () async throws -> [Int]
  ) -> Task<Void, Never> {
    if index < Self.wrappers {
      return screens[index].$items.load(key, in: cache, silently: silently, options: options, block: block)
    }
    return model.load(\.items, key: key, in: cache, silently: silently, options: options, block: block)
  }

  func refresh(
    _ index: Int, key: CacheKey<[Int]>, in cache: LoadCache, options: LoadOptions?,
    block: @escaping @MainActor () async throws -> [Int]
  ) -> Task<Void, Never> {
    if index < Self.wrappers { return screens[index].$items.refresh(key, in: cache, options: options, block: block) }
    return model.refresh(\.items, key: key, in: cache, options: options, block: block)
  }

  func cancel(_ index: Int) {
    if index < Self.wrappers { screens[index].$items.cancel() } else { model.cancel(\.items) }
  }
}

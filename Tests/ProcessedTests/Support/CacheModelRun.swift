import ProcessedTesting
import Testing

@testable import Processed

/// One seeded run of `LoadCacheModelTests`: random operations on a `LoadCache` and, side by side, on the reference
/// `CacheModel`; after each operation the run settles deterministically and compares the two.
@MainActor
final class CacheModelRun {
  static let intKeys = 4
  /// The index of the `CacheKey<String>` in the model.
  static let stringKeyIndex = 4
  static let staleTime = Duration.seconds(10)
  static let gcTime = Duration.seconds(60)
  /// A key another state stays bound to (with a fresh value, so it never fetches): the collector always has a binding
  /// check to sleep for, so after `advance(by:)` the run waits for it to sleep again instead of guessing whether it ran.
  static let keeperKey = CacheKey<Int>("keeper")
  static let stringKey = CacheKey<String>("k", 0, "label")

  let seed: UInt64
  let operationCount: Int
  private let tracing: Bool
  private var random: MBRandom
  private let clock = TestClock()
  private let cache: LoadCache
  private let states = CacheModelStates()
  private let keeper = CacheModelScreen()
  private let script = CacheFetchScript()
  private var model: CacheModel

  /// The model's start of each script fetch, by script id.
  private var starts: [CacheModel.Start] = []
  private var pending: [Int] = []
  /// Per state, the Task of its own call whose wait is under way.
  private var waitTasks: [Task<Void, Never>?] = Array(repeating: nil, count: CacheModelStates.count)
  /// Tasks that must end before the run compares (their wait ended in this operation).
  private var ending: [Task<Void, Never>] = []
  private var allTasks: [Task<Void, Never>] = []
  private var cursors = Array(repeating: 0, count: CacheModelStates.count)
  private var deadValues: Set<Int> = []
  private var deadErrors: Set<Int> = []
  private var calls = 0
  private var nextSetValue = 20_000
  private var nextWrittenValue = -1
  private var trace: [String] = []
  private var failed = false
  private var operation = ""
  private var index = 0
  /// Where the current operation's writes start in the states' log.
  private var logStart = 0

  init(seed: UInt64, operations: Int, tracing: Bool) {
    self.seed = seed
    operationCount = operations
    self.tracing = tracing
    random = MBRandom(seed: seed)
    cache = LoadCache(staleTime: Self.staleTime, gcTime: Self.gcTime, clock: clock)
    model = CacheModel(
      keys: Self.intKeys + 1, states: CacheModelStates.count, staleTime: Self.staleTime, gcTime: Self.gcTime)
  }

  func run() async -> MBOutcome {
    bindKeeper()
    var done = 0
    while done < operationCount, !failed {
      index = done
      await step()
      done += 1
      await Task.yield()  // one operation per turn of the main actor, so the tests beside it go on
    }
    if !failed { await drain() }
    return MBOutcome(operations: done, failed: failed)
  }

  private func intKey(_ index: Int) -> CacheKey<Int> { CacheKey("k", index) }

  private func bindKeeper() {
    cache.set(0, for: Self.keeperKey)
    let task = keeper.$number.load(Self.keeperKey, in: cache, options: LoadOptions(staleTime: .seconds(1_000_000))) {
      0
    }
    if task != KeyPathTargetEnded.task { fail("the keeper's fresh hit started a task") }
  }

  // MARK: Operations

  private func step() async {
    model.begin()
    logStart = states.log.writes.count
    let roll = random.below(100)
    switch roll {
    case 0..<20: cachedLoad(refreshing: false)
    case 20..<28: cachedLoad(refreshing: true)
    case 28..<33: stateOperation("cancel")
    case 33..<37: stateOperation("reset")
    case 37..<41: stateOperation("write")
    case 41..<46: plainLoad()
    case 46..<52: set()
    case 52..<57: invalidate()
    case 57..<60: invalidatePrefix()
    case 60..<63: remove()
    case 63..<64: removeAll()
    case 64..<70: await advance()
    default:
      if pending.isEmpty { cachedLoad(refreshing: false) } else { await finish() }
    }
    model.end()
    await settle()
  }

  private func note(_ text: String) {
    operation = text
    trace.append("\(index): \(text)")
    if trace.count > 40 { trace.removeFirst(trace.count - 40) }
    if tracing { print("cache model-based: \(index): \(text)") }
  }

  /// A state starts another call: the wait of its earlier call ends.
  private func endWait(_ state: Int) {
    if let task = waitTasks[state] {
      ending.append(task)
      waitTasks[state] = nil
    }
  }

  private func cachedLoad(refreshing: Bool) {
    let state = random.below(CacheModelStates.count)
    let key = random.below(Self.intKeys)
    let call = calls
    calls += 1
    let staleTime = random.pick([nil, Duration.zero, .seconds(1_000)])
    let silently = !refreshing && random.percent(20)
    let options = staleTime.map { LoadOptions(staleTime: $0) }
    let block = script.block(key: key, origin: call)
    note(
      "\(refreshing ? "refresh" : "load") state \(state) key \(key) call \(call) staleTime \(String(describing: staleTime))"
        + (silently ? " silently" : ""))
    endWait(state)
    let task =
      refreshing
      ? states.refresh(state, key: intKey(key), in: cache, options: options, block: block)
      : states.load(state, key: intKey(key), in: cache, silently: silently, options: options, block: block)
    let fresh = model.load(
      state, key: key, call: call, staleTime: staleTime, silently: silently, refreshing: refreshing)
    if fresh {
      if task != KeyPathTargetEnded.task { fail("a fresh hit started a task") }
    } else {
      if task == KeyPathTargetEnded.task { fail("a load the model finds not fresh started no task") }
      waitTasks[state] = task
      allTasks.append(task)
    }
  }

  private func stateOperation(_ name: String) {
    let state = random.below(name == "write" ? CacheModelStates.wrappers : CacheModelStates.count)
    endWait(state)
    switch name {
    case "cancel":
      note("cancel state \(state)")
      states.cancel(state)
      model.cancel(state)
    case "reset":
      note("reset state \(state)")
      states.reset(state)
      model.reset(state)
    default:
      let value = nextWrittenValue
      nextWrittenValue -= 1
      note("write .loaded(\(value)) to state \(state)")
      states.write(state, .loaded(value))
      model.manualWrite(state, value)
    }
  }

  private func plainLoad() {
    let state = random.below(CacheModelStates.count)
    let call = calls
    calls += 1
    note("plain load state \(state) call \(call)")
    endWait(state)
    allTasks.append(states.plainLoad(state, block: script.block(key: nil, origin: call)))
    model.plainLoad(state, call: call)
  }

  private func set() {
    let key = random.below(Self.intKeys + 1)
    let value = nextSetValue
    nextSetValue += 1
    note("set \(value) for key \(key)")
    if key == Self.stringKeyIndex {
      cache.set("s\(value)", for: Self.stringKey)
    } else {
      cache.set(value, for: intKey(key))
    }
    model.set(key, value)
  }

  private func invalidate() {
    let key = random.below(Self.intKeys + 1)
    note("invalidate key \(key)")
    if key == Self.stringKeyIndex { cache.invalidate(Self.stringKey) } else { cache.invalidate(intKey(key)) }
    model.invalidate(key)
  }

  private func invalidatePrefix() {
    let choice = random.below(Self.intKeys + 4)
    var matched: [Int]
    switch choice {
    case 0..<Self.intKeys:
      note("invalidate prefix (\"k\", \(choice))")
      cache.invalidate(prefix: "k", choice)
      matched = [choice]
    case Self.intKeys:
      note("invalidate prefix (\"k\", Int64(1))")  // components compare as AnyHashable
      cache.invalidate(prefix: "k", Int64(1))
      matched = [1]
    case Self.intKeys + 1:
      note("invalidate prefix (\"k\")")
      cache.invalidate(prefix: "k")
      matched = Array(0...Self.intKeys)
    case Self.intKeys + 2:
      note("invalidate prefix (\"k\", 0, \"label\")")
      cache.invalidate(prefix: "k", 0, "label")
      matched = [Self.stringKeyIndex]
    default:
      note("invalidate prefix (\"z\")")
      cache.invalidate(prefix: "z")
      matched = []
    }
    if choice == 0 { matched.append(Self.stringKeyIndex) }
    for key in matched { model.invalidate(key) }
  }

  private func remove() {
    let key = random.below(Self.intKeys + 1)
    note("remove key \(key)")
    if key == Self.stringKeyIndex { cache.remove(Self.stringKey) } else { cache.remove(intKey(key)) }
    model.remove(key)
  }

  private func removeAll() {
    note("removeAll")
    cache.removeAll()
    for key in 0...Self.intKeys { model.remove(key) }
    bindKeeper()
  }

  private func advance() async {
    let duration = random.percent(20) ? Self.gcTime : .seconds(random.below(15))
    note("advance by \(duration)")
    do {
      try await clock.waitForCacheTimers(1, timeLimit: .seconds(10))
      clock.advance(by: duration)
      model.advance(by: duration)
      // The collector, woken or not, sleeps again (for the keeper's next check) once it has collected.
      try await clock.waitForCacheTimers(1, timeLimit: .seconds(10))
    } catch {
      fail("the cache's collector did not sleep again")
    }
  }

  private func finish() async {
    let id = pending.remove(at: random.below(pending.count))
    let start = starts[id]
    let succeeds = random.percent(75)
    let result: Result<Int, CacheModelFailure> =
      succeeds ? .success(10_000 + id) : .failure(CacheModelFailure(code: id))
    let live = model.finish(start.id, key: start.key, state: start.state, with: result)
    note(
      "\(succeeds ? "complete" : "fail") fetch \(id) (\(start.key.map { "key \($0)" } ?? "plain, state \(start.state ?? -1)"), "
        + "call \(start.origin))" + (live ? "" : " [superseded]"))
    if !live {
      if succeeds { deadValues.insert(10_000 + id) } else { deadErrors.insert(id) }
    }
    if !(await script.resume(id, with: result)) { fail("fetch \(id)'s block did not return") }
  }

  // MARK: Settling and comparing

  private func settle() async {
    guard !failed else { return }
    if script.registrations.count != starts.count {
      return fail("an unexpected block ran (\(script.registrations.count - starts.count) more)")
    }
    let expected = starts.count + model.started.count
    if !(await script.untilRegistered(expected)) {
      return fail("expected \(model.started.count) fetches to start, \(script.registrations.count - starts.count) did")
    }
    var unmatched = model.started
    for id in starts.count..<expected {
      let registration = script.registrations[id]
      guard let match = unmatched.firstIndex(where: { $0.key == registration.key }) else {
        return fail("an unexpected fetch of key \(String(describing: registration.key)) started")
      }
      let start = unmatched.remove(at: match)
      if start.origin != registration.origin {
        return fail("a fetch ran call \(registration.origin)'s block; expected call \(start.origin)'s")
      }
      starts.append(start)
      pending.append(id)
    }
    for state in waitTasks.indices where !model.states[state].waiting { endWait(state) }
    if !ending.isEmpty {
      let tasks = ending
      ending = []
      if !(await SafetyLimit.within { for task in tasks { await task.value } }) {
        return fail("the Task of a call whose wait ended did not end")
      }
    }
    compare()
  }

  private func compare() {
    for state in 0..<CacheModelStates.count {
      let actual = states.state(state)
      let expected = model.states[state].shown
      if actual != expected { return fail("state \(state) is \(actual); expected \(expected)") }
      let recorded = states.recorders[state].values
      let new = recorded[cursors[state]...]
      cursors[state] = recorded.count
      if !model.states[state].wroteLoading, new.contains(.loading) {
        return fail("`.loading` was written to state \(state) (\(Array(new)))")
      }
      for written in new {
        if case .loaded(let value) = written, deadValues.contains(value) {
          return fail("a superseded fetch's value \(value) was written to state \(state)")
        }
        if case .error(let error as CacheModelFailure) = written, deadErrors.contains(error.code) {
          return fail("a superseded fetch's error \(error) was written to state \(state)")
        }
      }
    }
    if let written = model.deliveredState {
      // The entry's write reaches every bound state in the order they were bound.
      let order = states.log.writes[logStart...].filter { $0.written == written }.map(\.state)
      if order != model.delivered {
        return fail("\(written) reached states \(order); expected \(model.delivered), in that order")
      }
    }
    for key in 0..<Self.intKeys {
      let actual = cache.value(for: intKey(key))
      if let actual, deadValues.contains(actual) { return fail("a superseded fetch's value is key \(key)'s") }
      let expected = model.entries[key].value
      if actual != expected {
        return fail("key \(key)'s value is \(String(describing: actual)); expected \(String(describing: expected))")
      }
    }
    let text = cache.value(for: Self.stringKey)
    let expectedText = model.entries[Self.stringKeyIndex].value.map { "s\($0)" }
    if text != expectedText {
      return fail("the String key's value is \(String(describing: text)); expected \(String(describing: expectedText))")
    }
    if cache.count != model.count + 1 {
      return fail("count is \(cache.count); expected \(model.count + 1) (with the keeper)")
    }
  }

  /// Ends every fetch still waiting, then every Task of the run must end.
  private func drain() async {
    while !pending.isEmpty, !failed {
      model.begin()
      logStart = states.log.writes.count
      let id = pending.removeFirst()
      let start = starts[id]
      let result = Result<Int, CacheModelFailure>.success(10_000 + id)
      if !model.finish(start.id, key: start.key, state: start.state, with: result) { deadValues.insert(10_000 + id) }
      note("drain: complete fetch \(id)")
      if !(await script.resume(id, with: result)) { fail("fetch \(id)'s block did not return") }
      model.end()
      await settle()
    }
    guard !failed else { return }
    let tasks = allTasks
    if !(await SafetyLimit.within { for task in tasks { await task.value } }) { fail("a call's Task never ended") }
  }

  private func fail(_ what: String) {
    guard !failed else { return }
    failed = true
    Issue.record(
      """
      cache model-based: seed \(seed) (0x\(String(seed, radix: 16, uppercase: true))), operation \(index) \
      (\(operation)): \(what)
      last operations:
      \(trace.joined(separator: "\n"))
      """)
  }
}

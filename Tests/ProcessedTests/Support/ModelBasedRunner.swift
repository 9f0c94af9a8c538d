import Testing

@testable import Processed

/// What one run reports back to the test.
struct MBOutcome {
  var operations: Int
  var failed: Bool
}

/// Runs a seeded random sequence of operations against one subject and, side by side, against a small reference
/// model of the rules (SPEC Phase 1, B1–B6 and Observation); after every operation it compares the two.
///
/// The reference model is three variables and the observers' expected histories:
/// - `state`: the state the subject must hold;
/// - `current`: the load that may still write (a newer load, `cancel`, `reset`, a manual write, its own ending or
///   the cancellation of its task make it stop);
/// - `tracked`: the load the engine's bookkeeping holds (the same, except that a load cancelled through its task
///   stays tracked until its task ends);
/// - per observer, the values written while it was registered, in order.
///
/// Every event is explicit: blocks wait on gates that only an operation opens, interrupts have zero delays and the
/// runner waits for them, and every wait is for a condition (never for time), so a seed always replays the same way.
@MainActor
final class MBRun<Subject: MBSubject> {
  typealias State = Subject.State

  let seed: UInt64
  let operationCount: Int
  let subject: Subject
  private let tracing: Bool
  private var random: MBRandom

  // The reference model.
  private var state: State
  private var current: Int?
  private var tracked: Int?

  private var loads: [MBLoad<State>] = []
  private var records: [MBRecord<State>] = []
  private var nextSeq = 0
  /// A `cancelOther` observer whose target is the next observer added.
  private var awaitingTarget: MBRecord<State>?
  /// Set when an observer cancelled a running load (so a load it cancels as it starts never fires its interrupts).
  private var handlerCancelledLoad = false {
    didSet { progress.fire() }
  }
  /// Fired after every change the runner waits for: of a load's progress, of `handlerCancelledLoad`, of what a
  /// states sequence delivered.
  private let progress = Signal()
  private var trace: [String] = []
  private var step = 0
  private(set) var performed = 0
  private(set) var failed = false

  init(seed: UInt64, operations: Int, tracing: Bool, subject: Subject) {
    self.seed = seed
    operationCount = operations
    self.tracing = tracing
    self.subject = subject
    random = MBRandom(seed: seed)
    state = subject.state
  }

  /// Creates a subject, runs it and checks that nothing keeps the subject's owner alive afterwards.
  static func perform(
    _ seed: UInt64, _ operations: Int, _ tracing: Bool, _ makeSubject: () -> Subject
  ) async -> MBOutcome {
    weak var owner: AnyObject?
    var outcome: MBOutcome
    var name = ""
    do {
      let run = MBRun(seed: seed, operations: operations, tracing: tracing, subject: makeSubject())
      owner = run.subject.owner
      name = run.subject.name
      await run.execute()
      outcome = MBOutcome(operations: run.performed, failed: run.failed)
    }
    if !outcome.failed, owner != nil {
      for _ in 0..<50 where owner != nil { await Task.yield() }
      if owner != nil {
        outcome.failed = true
        Issue.record("model-based: seed \(seed) (\(name)): the subject is still alive after the run (B10)")
      }
    }
    return outcome
  }

  func execute() async {
    note("subject \(subject.name), seed \(seed), initial state \(state)")
    for index in 0..<operationCount {
      step = index
      await performOperation()
      performed += 1
      verify(full: index % 25 == 24)
      if failed { break }
      await Task.yield()  // one operation per turn of the main actor, so the tests beside it go on
    }
    step = operationCount
    await finish()
  }

  // MARK: Operations

  private enum Form: String {
    case task, async, interrupted
  }

  private func performOperation() async {
    switch random.below(100) {
    case ..<22: await start(.task)
    case ..<28: await start(.async)
    case ..<34: await start(.interrupted)
    case ..<58: if await !release() { await start(.task) }
    case ..<64: cancel()
    case ..<69: reset()
    case ..<74: write(endingLoad: true)
    case ..<77: write(endingLoad: !subject.canWriteKeepingLoad)
    case ..<81: await cancelTask()
    case ..<89: addObserver()
    case ..<97: removeObserver()
    default: addStream()
    }
  }

  /// Starts a scripted load (B1), as a Task form, an `async` form (B8) or a form with interrupts (B9).
  private func start(_ form: Form) async {
    let kind = random.pick(MBKind.allCases)
    var silently = random.percent(25)
    let isYielding = subject.canYield && random.percent(50)
    let isCooperative = random.percent(10)
    let neverReleased = !isCooperative && random.percent(8)
    let stageCount = isYielding ? 1 + random.below(3) : 1
    var yields: [[State]] = []
    for _ in 0..<stageCount {
      var stage: [State] = []
      if isYielding {
        for _ in 0..<random.below(3) { stage.append(State.mbRandom(&random)) }
      }
      yields.append(stage)
    }
    let terminal: MBTerminal
    switch random.below(100) {
    case ..<40: terminal = isYielding ? .finish : .value(random.below(4))
    case ..<60: terminal = .failure(random.below(2))
    case ..<72: terminal = .cancelControl(loadFlavoured: random.percent(50))
    case ..<86: terminal = .resetControl(loadFlavoured: random.percent(50))
    default: terminal = .cancellationError
    }
    var interrupt: MBInterrupt?
    let isAsync: Bool
    if form == .interrupted {
      let delays: [[Duration]] = [[.zero], [.zero, .zero], [.seconds(-1)], [.zero, .milliseconds(-5)]]
      let action: MBInterruptAction
      switch random.below(5) {
      case 0: action = .ignore
      case 1: action = .timeout
      case 2: action = .failure(random.below(2))
      case 3: action = .cancelControl(loadFlavoured: random.percent(50))
      default: action = .resetControl(loadFlavoured: random.percent(50))
      }
      interrupt = MBInterrupt(delays: random.pick(delays), action: action)
      isAsync = random.percent(30)
    } else {
      isAsync = form == .async
    }

    let load = MBLoad(
      index: loads.count, kind: kind, isYielding: isYielding, isAsync: isAsync, isCooperative: isCooperative,
      neverReleased: neverReleased, yields: yields, terminal: terminal, interrupt: interrupt, progress: progress)
    // A refresh: a returning load without interrupts of a loadable state (it has no `silently`).
    load.isRefresh = State.mbRefreshes && !isYielding && interrupt == nil && random.percent(25)
    silently = silently && !load.isRefresh
    load.keepsContent = load.isRefresh && state.mbKeepsOnRefresh
    loads.append(load)
    note("start \(load.description)\(silently ? " silently" : "")\(load.isRefresh ? " as a refresh" : "")")

    // The real side.
    handlerCancelledLoad = false
    load.attach(subject.start(request(for: load, silently: silently)))
    if let interrupt {
      // An observer that cancels the load when `.loading` is written stops the interrupts before they fire.
      guard
        await waitUntil(
          "the interrupts of L\(load.index)", { load.entered && (load.interruptDone || self.handlerCancelledLoad) })
      else { return }
      let expectedCalls = handlerCancelledLoad ? 0 : interrupt.expectedCalls
      if load.interruptCalls != expectedCalls {
        fail("onInterrupt of L\(load.index) was called \(load.interruptCalls) times, expected \(expectedCalls)")
      }
    } else if isAsync {
      guard await waitUntil("the async load L\(load.index) to start", { load.entered }) else { return }
    }

    // The model: the previous load is superseded, the start state is written unless silently or already there.
    current = load.index
    tracked = load.index
    let started = State.mbStarted(kind)
    if !silently, !load.keepsContent, state != started { write(started) }
    if let interrupt, current == load.index {
      switch interrupt.action {
      case .ignore: break
      case .timeout: end(with: .mbFailed(TimeoutError(), kind))
      case .failure(let code): end(with: .mbFailed(MBError(code: code), kind))
      case .cancelControl: end(with: nil)
      case .resetControl: endWithReset()
      }
    }
  }

  /// Opens the next gate of a random load that may be released — current or stale — and waits until the block has
  /// done that stage (B2, B3, B5, B6).
  private func release() async -> Bool {
    let candidates = loads.filter(\.isReleasable)
    guard !candidates.isEmpty else { return false }
    // Stale loads pile up, so half of the time release the current (or tracked) one if it can be.
    let live = candidates.filter { $0.index == current || $0.index == tracked }
    let load = !live.isEmpty && random.percent(50) ? random.pick(live) : random.pick(candidates)
    let stage = load.opened
    let isLast = stage == load.stageCount - 1
    let isCurrent = current == load.index
    note("release L\(load.index) stage \(stage + 1)/\(load.stageCount)\(isCurrent ? " (current)" : " (stale)")")
    load.openNext()
    if isLast {
      guard await waitUntil("L\(load.index) to end", { load.finished }) else { return true }
    } else {
      guard await waitUntil("L\(load.index) to pass stage \(stage + 1)", { load.passed > stage }) else { return true }
    }

    // An observer may cancel the load while a yielded state is delivered; later yields are then dropped.
    for yielded in load.yields[stage] where current == load.index { write(yielded) }
    guard isLast else { return true }
    if current == load.index {
      switch load.terminal {
      case .value(let value): end(with: .mbCompleted(value, load.kind))
      case .failure(let code): end(with: load.keepsContent ? nil : .mbFailed(MBError(code: code), load.kind))
      case .finish, .cancelControl, .cancellationError: end(with: nil)
      case .resetControl: endWithReset()
      }
    } else if tracked == load.index {
      // Cancelled through its task: ending drops the bookkeeping, writes nothing.
      tracked = nil
    }
    return true
  }

  /// `cancel()`: the load ends, the state stays (B4).
  private func cancel() {
    note("cancel")
    subject.cancel()
    end(with: nil)
  }

  /// `reset()`: the load ends, the reset state is written unless it is already there (B4).
  private func reset() {
    note("reset")
    subject.reset()
    endWithReset()
  }

  /// A manual write: wrappers cancel the load (B6); a key path's direct write leaves it running unless the test
  /// cancels first.
  private func write(endingLoad: Bool) {
    let value = State.mbRandom(&random)
    note("write \(value)\(endingLoad ? "" : " (load keeps running)")")
    subject.write(value, endingLoad: endingLoad)
    if endingLoad { end(with: nil) }
    state = value
    if subject.manualWriteNotifies { deliver(value) }
  }

  /// Cancels a load's task (the current one half of the time): it never writes again (B6).
  private func cancelTask() async {
    let running = loads.filter { !$0.finished }
    guard !running.isEmpty else {
      cancel()
      return
    }
    let load: MBLoad<State>
    if let current, random.percent(50) {
      load = loads[current]
    } else {
      load = random.pick(running)
    }
    note("cancel the task of L\(load.index)\(current == load.index ? " (current)" : "")")
    load.task?.cancel()
    if current == load.index { current = nil }
    if load.isCooperative {
      guard await waitUntil("the cancelled L\(load.index) to end", { load.finished }) else { return }
      if tracked == load.index { tracked = nil }
    }
  }

  /// Registers an observer, sometimes one that cancels itself, cancels another or registers a new one when called.
  private func addObserver() {
    let path = random.pick(subject.paths)
    let behaviour: MBBehaviour
    let targets = records.filter { $0.modelLive && $0.behaviour != .stream }
    switch random.below(100) {
    case ..<60: behaviour = .plain
    case ..<72: behaviour = .cancelSelf(after: 1 + random.below(3))
    case ..<84: behaviour = .spawn(random.pick(subject.paths))
    case ..<94: behaviour = targets.isEmpty ? .plain : .cancelOther
    default: behaviour = .cancelLoad
    }
    let record = makeRecord(path, behaviour)
    if let waiting = awaitingTarget, behaviour != .cancelOther {
      // An earlier `cancelOther` observer cancels this newer one, which its registry calls after it.
      waiting.target = record
      awaitingTarget = nil
    }
    if behaviour == .cancelOther {
      if random.percent(50) { record.target = random.pick(targets) } else { awaitingTarget = record }
    }
    let targetName = record.target.map { " " + $0.name } ?? (behaviour == .cancelOther ? " (the next observer)" : "")
    note("observe \(record.name) on \(path) \(behaviour)\(targetName)")
    register(record)
    record.modelLive = true
  }

  /// Cancels or releases a random observer's token; sometimes cancels a cancelled one again (idempotent).
  private func removeObserver() {
    let live = records.filter { $0.modelLive && $0.behaviour != .stream }
    if live.isEmpty || random.percent(10) {
      let dead = records.filter { !$0.modelLive && $0.token != nil }
      guard !dead.isEmpty else { return }
      let record = random.pick(dead)
      note("cancel \(record.name) again")
      record.token?.cancel()
      return
    }
    let record = random.pick(live)
    if random.percent(70) {
      note("cancel \(record.name)")
      record.token?.cancel()
    } else {
      note("release the token of \(record.name)")
      record.token = nil
    }
    record.modelLive = false
  }

  /// Starts consuming `states` (it yields the current state, then every change).
  private func addStream() {
    guard subject.hasStates, records.filter({ $0.behaviour == .stream }).count < 2 else {
      addObserver()
      return
    }
    let record = makeRecord(.own, .stream)
    note("consume states as \(record.name)")
    let stream = subject.states()
    record.expected = [state]
    record.modelLive = true
    let progress = progress
    record.streamTask = Task { [weak record] in
      for await value in stream {
        record?.received.append(value)
        progress.fire()
      }
      progress.fire()  // ended: its observer is gone
    }
  }

  // MARK: The end

  /// Ends the current load, lets every load run to its end, and checks that nothing more was written; then cancels
  /// every observer and checks that nothing is left behind (B6, B10).
  private func finish() async {
    let alreadyFailed = failed
    if random.percent(50) { reset() } else { cancel() }
    verify(full: true)
    note("open every gate")
    for load in loads {
      while load.opened < load.stageCount { load.openNext() }
    }
    guard await waitUntil("every load to end", { self.loads.allSatisfy(\.finished) }) else { return }
    for _ in 0..<20 { await Task.yield() }
    verify(full: true)

    if let load = loads.first(where: { $0.unexpectedDelay != nil }) {
      fail("onInterrupt of L\(load.index) got accumulatedDelay \(load.unexpectedDelay!), expected .zero")
    }

    let streams = records.filter { $0.behaviour == .stream }
    _ = await waitUntil("the states sequences to deliver") {
      streams.allSatisfy { $0.received.count >= $0.expected.count }
    }
    for _ in 0..<10 { await Task.yield() }
    for record in streams where record.received != record.expected {
      fail("states sequence \(record.name): \(difference(record.received, record.expected))")
    }

    note("cancel every observer")
    for record in records {
      record.token?.cancel()
      record.modelLive = false
      record.streamTask?.cancel()
    }
    _ = await waitUntil("every observer to be removed") {
      self.subject.paths.allSatisfy { self.subject.observerCount($0) == 0 }
    }
    for path in subject.paths where subject.observerCount(path) != 0 {
      fail("\(subject.observerCount(path)) observers left in the \(path) registry after every token was cancelled")
    }

    // A write after every token was cancelled reaches nobody.
    let histories = records.map(\.received)
    subject.write(.mbReset, endingLoad: true)
    subject.reset()
    for _ in 0..<5 { await Task.yield() }
    if records.map(\.received) != histories { fail("an observer was called after its token was cancelled") }

    if subject.isTracking { fail("the engine still tracks a load after every load ended") }
    if subject.hostEntries != 0 { fail("\(subject.hostEntries) key-path host entries left after every load ended") }
    if !alreadyFailed, failed, tracing { print(trace.joined(separator: "\n")) }
  }

  // MARK: The model

  /// The load stops being current; `written` (its outcome), if any, is written.
  private func end(with written: State?) {
    current = nil
    tracked = nil
    if let written { write(written) }
  }

  private func endWithReset() {
    end(with: nil)
    if state != .mbReset { write(.mbReset) }
  }

  /// A write that notifies: the state changes and every observer registered when the write began receives it, in
  /// registration order per registry (the wrapper's own first, then the model's).
  private func write(_ value: State) {
    state = value
    deliver(value)
  }

  private func deliver(_ value: State) {
    let order = subject.paths
    let snapshot = records.filter(\.modelLive).sorted {
      (order.firstIndex(of: $0.path)!, $0.seq) < (order.firstIndex(of: $1.path)!, $1.seq)
    }
    for record in snapshot where record.modelLive {
      record.expected.append(value)
      switch record.behaviour {
      case .cancelSelf(let count) where record.expected.count == count:
        record.modelLive = false
      case .spawn(let path) where record.expected.count == 1:
        child(of: record, on: path).modelLive = true
      case .cancelOther where record.expected.count == 1:
        record.target?.modelLive = false
      case .cancelLoad where record.expected.count == 1:
        current = nil
        tracked = nil
      default: break
      }
    }
  }

  // MARK: Observers, the real side

  private func makeRecord(_ path: MBPath, _ behaviour: MBBehaviour) -> MBRecord<State> {
    let record = MBRecord<State>(seq: nextSeq, path: path, behaviour: behaviour)
    nextSeq += 1
    records.append(record)
    return record
  }

  private func register(_ record: MBRecord<State>) {
    record.token = subject.observe(record.path) { [weak self, weak record] value in
      guard let self, let record else { return }
      record.received.append(value)
      self.react(record)
    }
  }

  /// What an observer does when it is called.
  private func react(_ record: MBRecord<State>) {
    switch record.behaviour {
    case .cancelSelf(let count) where record.received.count == count:
      record.token?.cancel()
    case .spawn(let path) where record.received.count == 1:
      let child = child(of: record, on: path)
      if child.token == nil { register(child) }
    case .cancelOther where record.received.count == 1:
      record.target?.token?.cancel()
    case .cancelLoad where record.received.count == 1:
      if subject.isTracking { handlerCancelledLoad = true }
      subject.cancel()
    default: break
    }
  }

  private func child(of record: MBRecord<State>, on path: MBPath) -> MBRecord<State> {
    if let child = record.child { return child }
    let child = makeRecord(path, .plain)
    record.child = child
    return child
  }

  // MARK: Checking

  /// Compares the subject with the model: the state, the engine's bookkeeping, the observer counts, and the
  /// observers' histories (their lengths after every operation, in full every 25 operations).
  private func verify(full: Bool) {
    guard !failed else { return }
    if subject.state != state {
      fail("the state is \(subject.state), the model expects \(state)")
      return
    }
    if subject.isTracking != (tracked != nil) {
      fail(
        "the engine \(subject.isTracking ? "still tracks a load" : "tracks no load"), the model expects "
          + (tracked.map { "L\($0)" } ?? "none"))
      return
    }
    for record in records where record.behaviour != .stream {
      if record.received.count != record.expected.count || (full && record.received != record.expected) {
        fail(
          "observer \(record.name) (\(record.path), \(record.behaviour)): \(difference(record.received, record.expected))"
        )
        return
      }
    }
    for path in subject.paths {
      let expected = records.filter { $0.modelLive && $0.path == path }.count
      let actual = subject.observerCount(path)
      if actual != expected {
        fail("the \(path) registry has \(actual) observers, the model expects \(expected)")
        return
      }
    }
  }

  private func difference(_ received: [State], _ expected: [State]) -> String {
    let index =
      zip(received, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
      ?? min(received.count, expected.count)
    let from = max(0, index - 2)
    return "received \(received.count) values, expected \(expected.count); first difference at \(index): "
      + "received …\(Array(received[from...]).prefix(6)), expected …\(Array(expected[from...]).prefix(6))"
  }

  private func note(_ text: String) {
    let line = "#\(step) \(text)"
    trace.append(line)
    if tracing { print("model-based: \(line)") }
  }

  private func fail(_ message: String) {
    guard !failed else { return }
    failed = true
    let recent = trace.suffix(16).joined(separator: "\n    ")
    Issue.record(
      """
      model-based: seed \(seed) (\(subject.name)) op \(step): \(message)
        replay: PROCESSED_SEED=\(seed) swift test --filter ModelBased (PROCESSED_MODEL_TRACE=1 prints every op)
        last operations:
          \(recent)
      """)
  }

  /// Waits until `condition` holds, woken by `progress`; fails (with the seed) if it does not within 30 s.
  private func waitUntil(_ what: String, _ condition: () -> Bool) async -> Bool {
    if await holds(wokenBy: [.signal(progress)], within: .seconds(30), condition) { return true }
    fail("timed out waiting for \(what)")
    return false
  }

  // MARK: Blocks

  /// The scripted blocks of `load`.
  private func request(for load: MBLoad<State>, silently: Bool) -> MBRequest<State> {
    let returning: @MainActor @Sendable () async throws -> Int = {
      load.entered = true
      try await load.waitForStage(0)
      return try load.terminal.perform()
    }
    var yielding: (@MainActor @Sendable ((State) -> Void) async throws -> Void)?
    if load.isYielding {
      yielding = { yield in
        load.entered = true
        for stage in 0..<load.stageCount {
          try await load.waitForStage(stage)
          for value in load.yields[stage] { yield(value) }
          if stage < load.stageCount - 1 { load.passed = stage + 1 }
        }
        _ = try load.terminal.perform()
      }
    }
    var request = MBRequest(
      kind: load.kind, silently: silently, isAsync: load.isAsync, interrupts: load.interrupt?.delays,
      onInterrupt: { try load.interrupted(after: $0) }, returning: returning, yielding: yielding)
    request.refresh = load.isRefresh
    return request
  }
}

import ProcessedTesting
import Testing

@testable import Processed

/// Random mixes of every load policy — debounce, retry, timeout, limiter, `.joinRunning`, silent loads — with
/// cancel, reset, manual writes, newer loads, finishing blocks and time passing, on three states (a wrapper, a plain
/// key-path state, a standalone wrapper) that share one limiter. Checked on every step:
/// - no stale load ever writes: every value a load writes carries its call's number, which must be the number of the
///   state's current load when the observer sees it;
/// - a load that stopped being current never starts its block again (not after a debounce, a permit or a retry delay);
/// and at the end, when every block has finished and all time has passed: no permit is held or awaited.
@MainActor
@Suite(.serialized) struct PolicyRandomizedTests {
  struct Failure: Error, Equatable { let call: Int }

  @MainActor
  final class Run {
    let clock = TestClock()
    let limiter = LoadLimiter(maxConcurrent: 2)
    let model = PolicyModel()
    let standalone = Loadable<Int>()
    /// The number of each state's current load (nil: none).
    var owner: [Int?] = [nil, nil, nil]
    /// How many times each call's block started.
    var attempts: [Int: Int] = [:]
    /// The attempts a call had when it stopped being current; it must never start another.
    var stoppedAt: [Int: Int] = [:]
    /// Blocks waiting for the test to finish them, by block run (a call's timed-out attempt may still wait when its
    /// next attempt starts).
    var pending: [Int: CheckedContinuation<Bool, Never>] = [:]
    var nextBlockRun = 0
    /// Calls whose first attempt has no wait before it (no limiter, no timeout, no trailing debounce).
    var startsAtOnce: Set<Int> = []
    var tasks: [Task<Void, Never>] = []
    var finishedTasks = 0 {
      didSet { taskFinished.fire() }
    }
    let taskFinished = Signal()
    var tokens: [ObservationToken] = []
    var issues: [String] = []
    var nextCall = 0
    var log: [Int: [String]] = [:]

    init() {
      tokens.append(model.$results.observe { [unowned self] in self.check($0, state: 0) })
      tokens.append(model.observe(\.keyPathResults) { [unowned self] in self.check($0, state: 1) })
      tokens.append(standalone.projectedValue.observe { [unowned self] in self.check($0, state: 2) })
    }

    func check(_ value: LoadableState<Int>, state: Int) {
      let call: Int?
      switch value {
      case .loaded(let number) where number >= 0: call = number
      case .error(let error as Failure): call = error.call
      default: call = nil
      }
      if let call, owner[state] != call {
        issues.append(
          "state \(state): load \(call) wrote \(value) while \(String(describing: owner[state])) is current")
      }
    }

    func isRunning(_ state: Int) -> Bool {
      switch state {
      case 0: model.$results.storage.tracker.isRunning
      case 1: KeyPathHost.running(model, \.keyPathResults)?.tracker.isRunning ?? false
      default: standalone.projectedValue.storage.tracker.isRunning
      }
    }

    /// The current load of `state` stops being current.
    func stopOwner(of state: Int) {
      if let call = owner[state] {
        stoppedAt[call] = attempts[call, default: 0]
        log[call, default: []].append("stopped at \(attempts[call, default: 0])")
      }
      owner[state] = nil
    }

    func block(_ call: Int) -> @MainActor () async throws -> Int {
      { [unowned self] in
        // A load without waits starts its first block when its task runs, even when it stopped being current just
        // before (as a phase-1 load does); it never writes.
        let mayStillStartFirst = startsAtOnce.contains(call) && attempts[call, default: 0] == 0
        if let stopped = stoppedAt[call], attempts[call, default: 0] >= stopped, !mayStillStartFirst {
          issues.append("load \(call) started an attempt after it stopped being current: \(log[call] ?? [])")
        }
        attempts[call, default: 0] += 1
        nextBlockRun += 1
        let run = nextBlockRun
        let succeeds = await withCheckedContinuation { pending[run] = $0 }  // ignores cancellation
        if succeeds { return call }
        throw Failure(call: call)
      }
    }

    func start(_ state: Int, using generator: inout MBRandom) {
      nextCall += 1
      let call = nextCall
      var options = LoadOptions(clock: clock)
      switch Int.random(in: 0..<4, using: &generator) {
      case 0: options.debounce = .trailing(.milliseconds(100 * Int.random(in: 0...3, using: &generator)))
      case 1: options.debounce = .leading(.milliseconds(100 * Int.random(in: 1...3, using: &generator)))
      default: break
      }
      if Bool.random(using: &generator) {
        options.retry = .constant(.milliseconds(100), maxRetries: Int.random(in: 1...2, using: &generator))
      }
      if Int.random(in: 0..<3, using: &generator) == 0 { options.timeout = .milliseconds(200) }
      if Bool.random(using: &generator) { options.limiter = limiter }
      let joins = Int.random(in: 0..<5, using: &generator) == 0
      if joins { options.overlap = .joinRunning }
      let silently = Int.random(in: 0..<4, using: &generator) == 0
      if options.limiter == nil, options.timeout == nil, options.debounce != .trailing(.milliseconds(100)),
        options.debounce != .trailing(.milliseconds(200)), options.debounce != .trailing(.milliseconds(300))
      {
        startsAtOnce.insert(call)
      }
      log[call, default: []].append(
        "state \(state) \(options.debounce as Any) retry \(options.retry.maxRetries) timeout \(options.timeout as Any) limiter \(options.limiter != nil) join \(joins) running \(isRunning(state))"
      )
      if !(joins && isRunning(state)) {
        stopOwner(of: state)
        owner[state] = call
      }
      let task: Task<Void, Never> =
        switch state {
        case 0: model.$results.load(silently: silently, options: options, block: block(call))
        case 1: model.load(\.keyPathResults, silently: silently, options: options, block: block(call))
        default: standalone.projectedValue.load(silently: silently, options: options, block: block(call))
        }
      tasks.append(task)
      Task { [unowned self] in
        await task.value
        finishedTasks += 1
      }
    }

    func step(using generator: inout MBRandom) async {
      let state = Int.random(in: 0..<3, using: &generator)
      switch Int.random(in: 0..<12, using: &generator) {
      case 0...3: start(state, using: &generator)
      case 4:
        stopOwner(of: state)
        switch state {
        case 0: model.$results.cancel()
        case 1: model.cancel(\.keyPathResults)
        default: standalone.projectedValue.cancel()
        }
      case 5:
        stopOwner(of: state)
        switch state {
        case 0: model.$results.reset()
        case 1: model.reset(\.keyPathResults)
        default: standalone.projectedValue.reset()
        }
      case 6:
        switch state {
        case 0:
          stopOwner(of: state)
          model.results = .loaded(-1)
        case 1: model.keyPathResults = .loaded(-1)  // a plain property: its write stops no load
        default:
          stopOwner(of: state)
          standalone.wrappedValue = .loaded(-1)
        }
      case 7...8:
        if let run = pending.keys.sorted().randomElement(using: &generator) {
          pending.removeValue(forKey: run)?.resume(returning: Bool.random(using: &generator))
        }
      case 9...10:
        clock.advance(by: .milliseconds(100 * Int.random(in: 0...3, using: &generator)))
      default:
        await Task.yield()
      }
      await Task.yield()
    }

    /// Finishes every block and lets all time pass until every load's task has ended.
    func drain() async {
      for _ in 0..<10_000 where finishedTasks < tasks.count {
        for (_, continuation) in pending { continuation.resume(returning: true) }
        pending = [:]
        clock.advance(by: .seconds(10))
        await Task.yield()
      }
      await until(.signal(taskFinished)) { self.finishedTasks == self.tasks.count }
      // Blocks of timed-out attempts outlive their loads' tasks, holding their permits until they return.
      for _ in 0..<10_000 where !pending.isEmpty || limiter.running > 0 {
        for (_, continuation) in pending { continuation.resume(returning: true) }
        pending = [:]
        await Task.yield()
      }
    }
  }

  @Test(arguments: 0..<8)
  func noStaleWriteNoRestartAfterStoppingAndNoLeakedPermit(_ seed: UInt64) async {
    var generator = MBRandom(seed: 1_000 + seed)
    let run = Run()
    for _ in 0..<400 {
      await run.step(using: &generator)
    }
    await run.drain()
    #expect(run.issues == [])
    #expect(run.limiter.running == 0 && run.limiter.waiting == 0)
    #expect(run.clock.sleeperCount == 0)
  }
}

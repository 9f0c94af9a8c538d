import ProcessedTesting
import Testing

@testable import Processed

/// `LoadLimiter`: FIFO permits shared across states, never more than `maxConcurrent` blocks, no leaked permit.
@MainActor
@Suite struct LoadLimiterTests {
  /// `count` standalone states.
  func states(_ count: Int) -> [Loadable<Int>] { (0..<count).map { _ in Loadable<Int>() } }

  /// Starts a limited load of each state in turn, whose block records its index in `started`, runs `body` and
  /// returns the index; returns their tasks.
  func startLoads(
    of states: [Loadable<Int>], options: LoadOptions, recordingIn started: StateRecorder<Int>,
    _ body: @escaping @MainActor (_ index: Int) async -> Void
  ) -> [Task<Void, Never>] {
    states.indices.map { index in
      states[index].projectedValue.load(options: options) {
        started.record(index)
        await body(index)
        return index
      }
    }
  }

  @Test func loadsBeyondTheLimitShowTheirStartStateAndRunInTheOrderTheyWereCalled() async {
    let limiter = LoadLimiter(maxConcurrent: 2)
    let options = LoadOptions(limiter: limiter)
    let states = states(5)
    let gates = (0..<5).map { _ in Gate() }
    let started = StateRecorder<Int>()
    let tasks = startLoads(of: states, options: options, recordingIn: started) { await gates[$0].wait() }
    #expect(states.allSatisfy { $0.wrappedValue == .loading })  // written when called
    await gates[0].untilWaiting(1)
    await gates[1].untilWaiting(1)
    await until(.queue(of: limiter)) { limiter.waiting == 3 }
    #expect(started.values == [0, 1])
    #expect(limiter.running == 2)
    gates[1].open()
    await tasks[1].value
    await gates[2].untilWaiting(1)
    #expect(started.values == [0, 1, 2])
    for index in [0, 2, 3, 4] {
      gates[index].open()
      await tasks[index].value
    }
    #expect(started.values == [0, 1, 2, 3, 4])
    #expect(states.map(\.wrappedValue) == [.loaded(0), .loaded(1), .loaded(2), .loaded(3), .loaded(4)])
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  /// A load queues when it is called, not when its task first runs: right after the calls, before any of their tasks
  /// ran, `running` and `waiting` count them; a load stopped before its task ran gives its place (or its permit) up at
  /// once; and the permits go in the order of the calls.
  @Test func loadsQueueWhenTheyAreCalled() async {
    let limiter = LoadLimiter(maxConcurrent: 2)
    let options = LoadOptions(limiter: limiter)
    let states = states(5)
    let gate = Gate()
    let started = StateRecorder<Int>()
    let tasks = startLoads(of: states, options: options, recordingIn: started) { _ in await gate.wait() }
    // No task has run yet: this test has not suspended since the calls.
    #expect(started.values.isEmpty)
    #expect(limiter.running == 2 && limiter.waiting == 3)
    states[0].projectedValue.cancel()  // held a permit it never used: it passes to the first waiting load
    #expect(limiter.running == 2 && limiter.waiting == 2)
    states[3].projectedValue.reset()  // a waiting load leaves the queue
    #expect(limiter.running == 2 && limiter.waiting == 1)
    await gate.untilWaiting(2)
    #expect(started.values == [1, 2])
    gate.open()
    for task in tasks { await task.value }
    #expect(started.values == [1, 2, 4])
    #expect(states.map(\.wrappedValue) == [.loading, .loaded(1), .loaded(2), .absent, .loaded(4)])
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  @Test(arguments: ["newer load", "cancel", "reset", "manual write", "task cancelled", "caller cancelled"])
  func aWaitingLoadThatStopsBeingCurrentLeavesTheQueueAtOnceAndNeverRuns(_ how: String) async {
    let limiter = LoadLimiter(maxConcurrent: 1)
    let options = LoadOptions(limiter: limiter)
    let holder = Loadable<Int>()
    let gate = Gate()
    let holding: Task<Void, Never> = holder.projectedValue.load(options: options) {
      await gate.wait()
      return 0
    }
    await gate.untilWaiting(1)  // its block runs: it holds the permit
    #expect(limiter.running == 1)
    let waiter = Loadable<Int>()
    var ran = false
    let task: Task<Void, Never>
    if how == "caller cancelled" {
      task = Task {
        await waiter.projectedValue.load(options: options) {
          ran = true
          return 1
        }
      }
    } else {
      task = waiter.projectedValue.load(options: options) {
        ran = true
        return 1
      }
    }
    await until(.queue(of: limiter)) { limiter.waiting == 1 }
    switch how {
    case "newer load": let _: Task<Void, Never> = waiter.projectedValue.load { 2 }
    case "cancel": waiter.projectedValue.cancel()
    case "reset": waiter.projectedValue.reset()
    case "manual write": waiter.wrappedValue = .loaded(3)
    default: task.cancel()
    }
    await task.value
    #expect(limiter.waiting == 0)  // at once: the holder still runs
    #expect(limiter.running == 1)
    gate.open()
    await holding.value
    #expect(!ran)
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  @Test func aBlockThatIgnoresCancellationKeepsItsPermitUntilItReturns() async {
    let limiter = LoadLimiter(maxConcurrent: 1)
    let options = LoadOptions(limiter: limiter)
    let first = Loadable<Int>()
    let second = Loadable<Int>()
    let gate = Gate()
    let stubborn: Task<Void, Never> = first.projectedValue.load(options: options) {
      await gate.wait()  // ignores cancellation
      return 1
    }
    await gate.untilWaiting(1)
    first.projectedValue.cancel()
    var ran = false
    let next: Task<Void, Never> = second.projectedValue.load(options: options) {
      ran = true
      return 2
    }
    await until(.queue(of: limiter)) { limiter.waiting == 1 }
    #expect(limiter.running == 1 && !ran)
    gate.open()
    await stubborn.value
    await next.value
    #expect(ran)
    #expect(first.wrappedValue == .loading)  // the cancelled load never wrote
    #expect(second.wrappedValue == .loaded(2))
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  @Test func noPermitIsHeldDuringARetryDelay() async throws {
    let clock = TestClock()
    let limiter = LoadLimiter(maxConcurrent: 1)
    let retrying = LoadOptions(retry: .constant(.seconds(1), maxRetries: 1), limiter: limiter, clock: clock)
    let first = Loadable<Int>()
    let second = Loadable<Int>()
    var order: [String] = []
    let gate = Gate()
    let failing: Task<Void, Never> = first.projectedValue.load(options: retrying) {
      order.append("first \(order.count)")
      if order.count == 1 { throw CancellationLikeFailure() }
      return 1
    }
    try await clock.waitForSleepers(1)  // waiting to retry, holding nothing
    #expect(limiter.running == 0)
    let other: Task<Void, Never> = second.projectedValue.load(options: LoadOptions(limiter: limiter)) {
      order.append("second")
      await gate.wait()
      return 2
    }
    await gate.untilWaiting(1)
    #expect(limiter.running == 1 && order.count == 2)
    clock.advance(by: .seconds(1))
    await until(.queue(of: limiter)) { limiter.waiting == 1 }  // the retry queues again
    gate.open()
    await other.value
    await failing.value
    #expect(order == ["first 0", "second", "first 2"])
    #expect(first.wrappedValue == .loaded(1))
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  @Test func aTimedOutBlockKeepsItsPermitUntilItReturns() async throws {
    let clock = TestClock()
    let limiter = LoadLimiter(maxConcurrent: 1)
    let options = LoadOptions(timeout: .seconds(1), limiter: limiter, clock: clock)
    let state = Loadable<Int>()
    let gate = Gate()
    let task: Task<Void, Never> = state.projectedValue.load(options: options) {
      await gate.wait()
      return 1
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    await task.value
    #expect(state.wrappedValue == .error(TimeoutError()))
    #expect(limiter.running == 1)  // the block still runs
    gate.open()
    await until(.queue(of: limiter)) { limiter.running == 0 }
    #expect(state.wrappedValue == .error(TimeoutError()))
  }

  @Test func keyPathStatesProcessesAndSilentLoadsShareALimiter() async {
    let limiter = LoadLimiter(maxConcurrent: 1)
    let options = LoadOptions(limiter: limiter)
    let model = PolicyModel()
    model.keyPathResults = .loaded(0)
    let gate = Gate()
    var order: [String] = []
    let load: Task<Void, Never> = model.load(\.keyPathResults, silently: true, options: options) {
      order.append("load")
      await gate.wait()
      return 1
    }
    let run: Task<Void, Never> = model.$save.run(options: options) { order.append("save") }
    #expect(model.keyPathResults == .loaded(0))  // silent: nothing written
    #expect(model.save.isRunning)
    await until(.queue(of: limiter)) { limiter.waiting == 1 }
    gate.open()
    await load.value
    await run.value
    #expect(order == ["load", "save"])
    #expect(model.keyPathResults == .loaded(1))
    #expect(model.save.hasFinished)
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  @Test func aMaxConcurrentBelowOneIsAPreconditionFailure() async {
    await #expect(processExitsWith: .failure) {
      _ = LoadLimiter(maxConcurrent: 0)
    }
  }

  @Test func anUncontendedAcquireAndReleaseLeaveNothing() async {
    let limiter = LoadLimiter(maxConcurrent: 3)
    for _ in 0..<1_000 {
      #expect(await limiter.acquire())
      limiter.release()
    }
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  @Test func withPermitQueuesBehindLoadsGivesThePermitBackAndThrowsWhenCancelled() async throws {
    let limiter = LoadLimiter(maxConcurrent: 1)
    let state = Loadable<Int>()
    let gate = Gate()
    var order: [String] = []
    let load: Task<Void, Never> = state.projectedValue.load(options: LoadOptions(limiter: limiter)) {
      order.append("load")
      await gate.wait()
      return 1
    }
    await gate.untilWaiting(1)  // its block runs: it holds the permit
    #expect(limiter.running == 1)
    let work = Task { @MainActor in
      try await limiter.withPermit { order.append("work") }
    }
    let cancelled = Task { @MainActor in
      try await limiter.withPermit { order.append("cancelled work") }
    }
    await until(.queue(of: limiter)) { limiter.waiting == 2 }
    cancelled.cancel()
    await #expect(throws: CancellationError.self) { try await cancelled.value }
    #expect(limiter.waiting == 1)
    gate.open()
    await load.value
    try await work.value
    struct Failure: Error {}
    await #expect(throws: Failure.self) { try await limiter.withPermit { throw Failure() } }
    #expect(order == ["load", "work"])
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  /// 1,000 loads over 50 states, 4 permits: never more than 4 blocks at once, nothing left over.
  @Test func aThousandLoadsOverFiftyStatesNeverRunMoreThanTheLimit() async {
    let limiter = LoadLimiter(maxConcurrent: 4)
    let options = LoadOptions(limiter: limiter)
    let states = states(50)
    var generator = MBRandom(seed: 12)
    var runningNow = 0
    var mostAtOnce = 0
    var tasks: [Task<Void, Never>] = []
    for index in 0..<1_000 {
      let state = states[Int.random(in: 0..<50, using: &generator)]
      tasks.append(
        state.projectedValue.load(options: options) {
          runningNow += 1
          mostAtOnce = max(mostAtOnce, runningNow)
          #expect(limiter.running <= 4)
          await Task.yield()
          runningNow -= 1
          return index
        })
      switch Int.random(in: 0..<10, using: &generator) {
      case 0: state.projectedValue.cancel()
      case 1: state.projectedValue.reset()
      case 2: await Task.yield()
      default: break
      }
    }
    for task in tasks { await task.value }
    #expect(mostAtOnce <= 4 && mostAtOnce >= 1)
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  @Test func thousandsOfStatesCanShareOneLimiter() async {
    let limiter = LoadLimiter(maxConcurrent: 2)
    let options = LoadOptions(limiter: limiter)
    let states = states(5_000)
    let gate = Gate()
    var tasks: [Task<Void, Never>] = []
    for (index, state) in states.enumerated() {
      tasks.append(
        state.projectedValue.load(options: options) {
          await gate.wait()
          return 1
        })
      // Long under a sanitizer: the main actor's other work goes on between batches.
      if index % 500 == 499 { await Task.yield() }
    }
    await until(.queue(of: limiter)) { limiter.waiting == 4_998 }
    for (index, state) in states.dropFirst(2).prefix(4_000).enumerated() {
      state.projectedValue.cancel()
      if index % 500 == 499 { await Task.yield() }
    }
    #expect(limiter.waiting == 998)
    gate.open()
    // A load that never ends fails here instead of hanging the run.
    let ended = await SafetyLimit.within(.seconds(30)) { for task in tasks { await task.value } }
    #expect(ended, "a load's task never ended")
    #expect(states.filter { $0.wrappedValue == .loaded(1) }.count == 1_000)
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }
}

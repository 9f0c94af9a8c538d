import ProcessedTesting
import Testing

@testable import Processed

/// `LoadOptions.networkMode` and `LoadActivity.Phase.paused` (spec, "Revalidation: focus, network, interval"): offline
/// under `.online`, a fetch does not start and a retry does not continue; states keep what they show and say `.paused`;
/// on reconnect the paused fetches start and retries continue at the same attempt; mutations wait, in start order.
@MainActor
@Suite struct NetworkModeTests {
  let clock = TestClock()

  typealias Screen = CacheScreen

  struct Failure: Error, Equatable {}

  func key(_ name: String) -> CacheKey<Int> { CacheKey(name) }

  func entry(_ cache: LoadCache, _ name: String) -> CacheEntry<Int>? { cache.store.entry(for: key(name)) }

  @Test func anOfflineMissShowsLoadingPausedAndStartsWhenTheNetworkReturns() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let states = StateRecorder(screen.$number)
    let phases = StateRecorder(activityOf: screen.$number)
    var runs = 0
    cache.setOnline(false)
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache) {
      runs += 1
      return 7
    }
    #expect(screen.number == .loading)
    #expect(screen.$number.activity.phase == .paused)  // never a spinner that cannot tell offline from slow
    for _ in 0..<20 { await Task.yield() }
    #expect(runs == 0)
    cache.setOnline(true)
    try await task.value(timeLimit: .seconds(30))
    #expect(runs == 1)
    #expect(states.values == [.loading, .loaded(7)])
    #expect(phases.phases == [.paused, .running(attempt: 1), .idle])
  }

  @Test func anOfflineRefetchKeepsTheValueOnScreen() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    var runs = 0
    await screen.$number.load(key("a"), in: cache) {
      runs += 1
      return runs
    }
    cache.setOnline(false)
    let states = StateRecorder(screen.$number)
    cache.invalidate(key("a"))
    #expect(screen.$number.activity.phase == .paused)
    #expect(entry(cache, "a")?.activity.phase == .paused)
    for _ in 0..<20 { await Task.yield() }
    #expect(runs == 1)
    #expect(screen.number == .loaded(1))
    cache.setOnline(true)
    try await states.wait(forCount: 1)
    #expect(states.values == [.loaded(2)])
    #expect(runs == 2)  // the revalidation on reconnect joined the paused fetch
  }

  @Test func aPausedRetryContinuesAtTheSameAttempt() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    var attempts = 0
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 1), clock: clock)
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache, options: options) {
      attempts += 1
      throw Failure()
    }
    try await clock.waitForSleepers(1)  // the delay before attempt 2
    cache.setOnline(false)
    #expect(entry(cache, "a")?.activity.phase == .retrying(attempt: 2))  // during the delay: still retrying
    let entryPhases = StateRecorder(activityOf: screen.$number)
    clock.advance(by: .seconds(1))
    try await entryPhases.wait(forPhase: .paused)
    #expect(entry(cache, "a")?.activity.phase == .paused)
    #expect(attempts == 1)
    clock.advance(by: .seconds(60))  // a delay that ended offline is not waited again
    cache.setOnline(true)
    try await task.value(timeLimit: .seconds(30))
    #expect(attempts == 2)  // attempt 2, the last: not a third
    #expect(screen.number == .error(Failure()))
  }

  @Test func aTimeoutDoesNotCountWhilePaused() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let gate = Gate()
    let options = LoadOptions(timeout: .seconds(5), clock: clock)
    cache.setOnline(false)
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache, options: options) {
      await gate.wait()
      return 1
    }
    #expect(clock.sleeperCount == 0)  // no timeout sleeps while paused
    clock.advance(by: .seconds(60))
    cache.setOnline(true)
    await gate.untilWaiting(1)
    try await clock.waitForSleepers(1)  // the attempt's timeout, from now
    clock.advance(by: .seconds(4))
    gate.open()
    try await task.value(timeLimit: .seconds(30))
    #expect(screen.number == .loaded(1))
  }

  @Test func alwaysIgnoresTheNetwork() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    cache.setOnline(false)
    await screen.$number.load(key("a"), in: cache, options: LoadOptions(networkMode: .always, clock: clock)) { 3 }
    #expect(screen.number == .loaded(3))
    let value = try await cache.value(for: key("b"), options: LoadOptions(networkMode: .always)) { 4 }
    #expect(value == 4)
  }

  @Test func goingOfflineDoesNotStopARunningAttempt() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let gate = Gate()
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache) {
      await gate.wait()
      return 5
    }
    await gate.untilWaiting(1)
    cache.setOnline(false)
    gate.open()
    try await task.value(timeLimit: .seconds(30))
    #expect(screen.number == .loaded(5))
  }

  @Test func aPausedFetchHoldsNoPermit() async throws {
    let cache = LoadCache(clock: clock)
    let limiter = LoadLimiter(maxConcurrent: 1)
    let (cached, uncached) = (Screen(), Screen())
    let gate = Gate()
    cache.setOnline(false)
    let paused: Task<Void, Never> = cached.$number.load(
      key("a"), in: cache, options: LoadOptions(limiter: limiter, clock: clock)
    ) { 1 }
    #expect(limiter.running == 0 && limiter.waiting == 0)
    // A load without a cache takes the one permit meanwhile.
    let running: Task<Void, Never> = uncached.$number.load(options: LoadOptions(limiter: limiter, clock: clock)) {
      await gate.wait()
      return 2
    }
    await gate.untilWaiting(1)
    #expect(limiter.running == 1)
    cache.setOnline(true)  // the paused fetch queues behind it now
    await until(.queue(of: limiter)) { limiter.waiting == 1 }
    #expect(cached.$number.activity.phase == .running(attempt: 1))
    gate.open()
    try await running.value(timeLimit: .seconds(30))
    try await paused.value(timeLimit: .seconds(30))
    #expect(cached.number == .loaded(1) && uncached.number == .loaded(2))
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  @Test func everyStateWaitingForAPausedFetchShowsPaused() async throws {
    let cache = LoadCache(clock: clock)
    let (first, second) = (Screen(), Screen())
    cache.setOnline(false)
    let one: Task<Void, Never> = first.$number.load(key("a"), in: cache) { 1 }
    let two: Task<Void, Never> = second.$number.load(key("a"), in: cache) { 2 }  // joins the paused fetch
    #expect(first.$number.activity.phase == .paused && second.$number.activity.phase == .paused)
    cache.setOnline(true)
    try await one.value(timeLimit: .seconds(30))
    try await two.value(timeLimit: .seconds(30))
    #expect(first.number == .loaded(1) && second.number == .loaded(1))
    #expect(first.$number.activity.phase == .idle && second.$number.activity.phase == .idle)
  }

  /// Every face of a state waits for the network the same way.
  @Test func everyFacePauses() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let other = Screen()
    var runs: [String] = []
    cache.setOnline(false)
    let wrapper: Task<Void, Never> = screen.$number.load(key("wrapper"), in: cache) {
      runs.append("wrapper")
      return 1
    }
    let keyPath: Task<Void, Never> = screen.load(\.plain, key: key("keyPath"), in: cache) {
      runs.append("keyPath")
      return 2
    }
    let loadables: Task<Void, Never> = other.loadables.number.load(key("loadables"), in: cache) {
      runs.append("loadables")
      return 3
    }
    let caller = Task { try await cache.value(for: key("value")) { 4 } }
    #expect(screen.$number.activity.phase == .paused)
    #expect(screen.loadables.plain.activity.phase == .paused)
    #expect(other.$number.activity.phase == .paused)
    // The caller hops to the main actor first; nothing to observe before its entry exists.
    for _ in 0..<1_000 where entry(cache, "value")?.isPaused != true { await Task.yield() }
    #expect(entry(cache, "value")?.isPaused == true)
    for _ in 0..<20 { await Task.yield() }
    #expect(runs.isEmpty)
    cache.setOnline(true)
    for task in [wrapper, keyPath, loadables] { try await task.value(timeLimit: .seconds(30)) }
    #expect(try await caller.value(timeLimit: .seconds(30)) == 4)
    #expect(runs == ["wrapper", "keyPath", "loadables"])  // in the order they paused
    #expect(screen.number == .loaded(1) && screen.plain == .loaded(2) && other.number == .loaded(3))
  }

  @Test func aPollDueOfflineBecomesOnePausedFetch() async throws {
    let cache = LoadCache(staleTime: .seconds(1_000), clock: clock)
    let screen = Screen()
    var runs = 0
    let options = LoadOptions(refetchInterval: .seconds(10), clock: clock)
    await screen.$number.load(key("a"), in: cache, options: options) {
      runs += 1
      return runs
    }
    cache.setOnline(false)
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(10))
    await until(.activity(of: screen.$number)) { screen.$number.activity.phase == .paused }
    #expect(entry(cache, "a")?.revalidation?.pollTimer == nil)  // no poll is set while the fetch is paused
    clock.advance(by: .seconds(100))
    let states = StateRecorder(screen.$number)
    cache.setOnline(true)
    try await states.wait(forCount: 1)
    #expect(runs == 2)
    #expect(states.values == [.loaded(2)])
  }

  @Test func aFocusReturnWhileOfflineMakesOnePausedFetch() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    var runs = 0
    await screen.$number.load(key("a"), in: cache) {
      runs += 1
      return runs
    }
    cache.setOnline(false)
    cache.setFocused(false)
    cache.setFocused(true)
    #expect(screen.$number.activity.phase == .paused)
    clock.advance(by: .seconds(10))
    cache.setFocused(false)
    cache.setFocused(true)  // joins the paused fetch
    cache.setOnline(true)
    let states = StateRecorder(screen.$number)
    try await states.wait(forCount: 1)
    for _ in 0..<20 { await Task.yield() }
    #expect(runs == 2)
  }

  // MARK: Lifetime

  @Test func aPausedFetchWhoseStatesWentAwayNeverRuns() async throws {
    let cache = LoadCache(clock: clock)
    var screen: Screen? = Screen()
    var ran = false
    cache.setOnline(false)
    let task: Task<Void, Never> = screen!.$number.load(key("a"), in: cache) {
      ran = true
      return 1
    }
    #expect(entry(cache, "a")?.isPaused == true)
    screen = nil  // its storage unbinds at once: the paused fetch has nobody to wait for it
    try await task.value(timeLimit: .seconds(30))
    cache.setOnline(true)
    for _ in 0..<50 { await Task.yield() }
    #expect(!ran)
    #expect(entry(cache, "a")?.isFetching != true)
  }

  @Test func aPausedFetchOfACacheThatWentAwayNeverRuns() async throws {
    var cache: LoadCache? = LoadCache(clock: clock)
    let screen = Screen()
    var ran = false
    cache!.setOnline(false)
    let task: Task<Void, Never> = screen.$number.load(key("a"), in: cache!) {
      ran = true
      return 1
    }
    cache = nil  // closed on the main actor's next turn: its paused fetch ends without running
    try await task.value(timeLimit: .seconds(30))
    #expect(!ran)
    #expect(screen.number == .loading)  // the state keeps what it shows
  }

  // MARK: Mutations

  @Test func offlineMutationsShowAtOnceAndRunInStartOrderWhenOnline() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    var server = 10
    await screen.$number.load(key("a"), in: cache) { server }
    let states = StateRecorder(screen.$number)
    let phases = StateRecorder(activityOf: screen.$number)
    var operations: [Int] = []
    cache.setOnline(false)
    var tasks: [Task<Int, any Error>] = []
    for step in 1...3 {
      tasks.append(
        Task {
          try await cache.mutate(key("a"), optimistic: { $0 += step }) {
            operations.append(step)
            server += step
            return step
          }
        })
      await until(.changes(of: screen.$number)) { screen.number == .loaded(10 + (1...step).reduce(0, +)) }
    }
    for _ in 0..<20 { await Task.yield() }
    #expect(operations.isEmpty)
    #expect(phases.values.isEmpty)  // the bound state's activity does not change
    cache.setOnline(true)
    for (index, task) in tasks.enumerated() { #expect(try await task.value(timeLimit: .seconds(30)) == index + 1) }
    #expect(operations == [1, 2, 3])
    try await states.wait(until: { $0 == .loaded(16) })
    #expect(states.values.prefix(3) == [.loaded(11), .loaded(13), .loaded(16)])
  }

  @Test func pausedMutationsDoNotWaitForEachOther() async throws {
    let cache = LoadCache(clock: clock)
    cache.set(0, for: key("a"))
    cache.setOnline(false)
    let gate = Gate()
    var started: [Int] = []
    let tasks = (1...2).map { step in
      Task {
        try await cache.mutate(key("a"), optimistic: { $0 += step }) {
          started.append(step)
          await gate.wait()
        }
      }
    }
    for _ in 0..<1_000 where cache.value(for: key("a")) != 3 { await Task.yield() }
    #expect(cache.value(for: key("a")) == 3 && started.isEmpty)
    cache.setOnline(true)
    await gate.untilWaiting(2)  // the second runs while the first's operation is still under way
    #expect(started == [1, 2])
    gate.open()
    for task in tasks { try await task.value(timeLimit: .seconds(30)) }
  }

  @Test func aCancelledPausedMutationIsUndoneAndNeverRuns() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    await screen.$number.load(key("a"), in: cache) { 10 }
    cache.setOnline(false)
    var ran = false
    let task = Task {
      try await cache.mutate(key("a"), optimistic: { $0 += 5 }) { ran = true }
    }
    await until(.changes(of: screen.$number)) { screen.number == .loaded(15) }
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value(timeLimit: .seconds(30)) }
    #expect(screen.number == .loaded(10))
    cache.setOnline(true)
    for _ in 0..<20 { await Task.yield() }
    #expect(!ran)
  }
}

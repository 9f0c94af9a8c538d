import ProcessedTesting
import Testing

@testable import Processed

// Regression tests for the defects of issue #38, one rule of SPEC "Phase-3 rules made precise" each (with the
// "Shared cache" rules they sharpen). Every wait is on a `Gate`, a `TestClock`, an awaited task or a recorder, each
// with a time limit; nothing sleeps on real time.

private struct MutationFailure: Error, Equatable {}

extension CacheKey where Value == [Int] {
  fileprivate static var list: Self { CacheKey("list") }
}

extension CacheKey where Value == Int {
  fileprivate static func post(_ id: Int) -> Self { CacheKey("post", id) }
  fileprivate static func number(_ id: Int) -> Self { CacheKey("number", id) }
}

@MainActor
private final class ListScreen {
  @Loadable var list: LoadableState<[Int]>
}

@MainActor
private final class DetailScreen {
  @Loadable var post: LoadableState<Int>
}

/// A model whose states are `@Loadable` properties: `model.loadables.x` is then the wrapper's own state.
@MainActor
private final class WrapperModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  @Loadable var feed: LoadableState<Pages<Int, Int>>
  @Loadable var number: LoadableState<Int>
}

/// A model whose state is a plain property, loaded through its key path.
@MainActor
private final class PlainModel: LoadableSupport, ObservableModel {
  let observers = ObserverRegistry()
  var number: LoadableState<Int> = .absent
}

/// What a load's block running on another actor reports: that it started, and whether it saw its task cancelled.
/// Sendable and awaitable from any isolation (the main-actor `Gate` and `WrapperLatch` are not).
private final class BlockProbe: Sendable {
  private struct State {
    var started = false
    var sawCancellation: Bool?
    var startWaiters: [CheckedContinuation<Void, Never>] = []
    var endWaiters: [CheckedContinuation<Bool, Never>] = []
  }

  private let state = LockedBox(State())

  /// The block started.
  func start() {
    let waiters = state.withLock { state in
      state.started = true
      defer { state.startWaiters = [] }
      return state.startWaiters
    }
    for waiter in waiters { waiter.resume() }
  }

  /// The block ended; `sawCancellation`: whether its task was cancelled then.
  func end(sawCancellation: Bool) {
    let waiters = state.withLock { state in
      state.sawCancellation = sawCancellation
      defer { state.endWaiters = [] }
      return state.endWaiters
    }
    for waiter in waiters { waiter.resume(returning: sawCancellation) }
  }

  /// Returns once the block has started.
  func untilStarted(isolation: isolated (any Actor)? = #isolation) async {
    await withCheckedContinuation(isolation: isolation) { continuation in
      let now = state.withLock { state in
        if state.started { return true }
        state.startWaiters.append(continuation)
        return false
      }
      if now { continuation.resume() }
    }
  }

  /// Returns, once the block has ended, whether it saw its task cancelled. The block waits with `untilCancelled()`,
  /// which gives up at the safety limit, so this always returns.
  func sawCancellation(isolation: isolated (any Actor)? = #isolation) async -> Bool {
    await withCheckedContinuation(isolation: isolation) { continuation in
      let seen: Bool? = state.withLock { state in
        if let seen = state.sawCancellation { return seen }
        state.endWaiters.append(continuation)
        return nil
      }
      if let seen { continuation.resume(returning: seen) }
    }
  }
}

private typealias JobState = ProcessState<SingleProcess>

/// An actor with a stored actor-owned state, released by the test.
private actor StateHolder {
  @IsolatedLoadable var value: LoadableState<Int> = .absent

  func states() -> AsyncStream<LoadableState<Int>> { $value.states }

  func loadOnce() async { await $value.load { 7 } }
}

/// An actor that starts a load (or run) on a standalone actor-owned wrapper local to a method, and lets the wrapper
/// go away when the method returns.
private actor DetailService {
  /// Hands a standalone wrapper's `states` to a collecting task, runs one load to its end, and returns the collecting
  /// task. The wrapper goes away with the method, with no load running.
  func loadToTheEndAndDropTheState() async -> Task<[LoadableState<Int>], Never> {
    let state = IsolatedLoadable<Int>()
    let states = state.projectedValue.states
    let collector = Task {
      var seen: [LoadableState<Int>] = []
      for await element in states { seen.append(element) }
      return seen
    }
    await state.projectedValue.load { 1 }
    return collector
  }

  /// Starts a load whose block waits until it is cancelled, hands the wrapper's `states` to a collecting task, waits
  /// until the block runs, and returns the collecting task. The wrapper goes away with the method.
  func loadAndDropTheState(_ probe: BlockProbe) async -> Task<[LoadableState<Int>], Never> {
    let state = IsolatedLoadable<Int>()
    let _: Task<Void, Never> = state.projectedValue.load {
      probe.start()
      await untilCancelled()
      probe.end(sawCancellation: Task.isCancelled)
      return 1
    }
    let states = state.projectedValue.states
    let collector = Task {
      var seen: [LoadableState<Int>] = []
      for await element in states { seen.append(element) }
      return seen
    }
    await probe.untilStarted()
    withExtendedLifetime(state) {}  // the wrapper lives until the block runs, and no longer
    return collector
  }

  /// The same for a standalone `IsolatedProcess`.
  func runAndDropTheState(_ process: SingleProcess, _ probe: BlockProbe) async -> Task<[JobState], Never> {
    let job = IsolatedProcess<SingleProcess>(wrappedValue: .idle)
    let _: Task<Void, Never> = job.projectedValue.run(process) {
      probe.start()
      await untilCancelled()
      probe.end(sawCancellation: Task.isCancelled)
    }
    let states = job.projectedValue.states
    let collector = Task {
      var seen: [JobState] = []
      for await element in states { seen.append(element) }
      return seen
    }
    await probe.untilStarted()
    withExtendedLifetime(job) {}
    return collector
  }
}

@MainActor
@Suite struct PhaseThreeDefectTests {
  let clock = TestClock()

  // MARK: Defect 1 — mutate returns when its own operation ends

  /// Defect 1: `mutate` returns as soon as its own operation ends, and a succeeded mutation's update stays applied
  /// until the end-of-mutations invalidation (SPEC "Phase-3 rules made precise", first rule; "Shared cache", Mutations).
  @Test(arguments: [true, false])
  func aMutationReturnsWhenItsOwnOperationEndsWhileAnEarlierOneRuns(firstFails: Bool) async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let screen = ListScreen()
    let refetch = Gate()
    var fetches = 0
    await screen.$list.load(.list, in: cache) {
      fetches += 1
      if fetches == 1 { return [1] }
      await refetch.wait()
      return [9]  // the server's answer after both mutations
    }
    #expect(screen.list == .loaded([1]))
    let recorder = StateRecorder(screen.$list)
    let firstGate = Gate()
    let secondGate = Gate()
    let first = Task {
      try await cache.mutate(.list, optimistic: { $0.append(2) }) {
        await firstGate.wait()
        if firstFails { throw MutationFailure() }
        return "first"
      }
    }
    await firstGate.untilWaiting(1)
    let second = Task {
      try await cache.mutate(.list, optimistic: { $0.append(3) }) {
        await secondGate.wait()
        return "second"
      }
    }
    await secondGate.untilWaiting(1)
    #expect(screen.list == .loaded([1, 2, 3]))

    // The second operation ends first: its call returns now, while the first operation still waits.
    secondGate.open()
    var secondResult: String?
    let returned = await SafetyLimit.within { secondResult = try? await second.value }
    #expect(returned, "the second mutate did not return while the first still ran")
    #expect(secondResult == "second")
    #expect(firstGate.waiting == 1)
    #expect(screen.list == .loaded([1, 2, 3]))  // its update stays applied after its call returned
    #expect(cache.value(for: .list) == [1, 2, 3])
    #expect(fetches == 1)  // a mutation still runs: no invalidation yet

    firstGate.open()
    if firstFails {
      await #expect(throws: MutationFailure.self) { try await first.value(timeLimit: .seconds(30)) }
      #expect(screen.list == .loaded([1, 3]))  // the base with the second's update applied again
      #expect(cache.value(for: .list) == [1, 3])
    } else {
      #expect(try await first.value(timeLimit: .seconds(30)) == "first")
      #expect(screen.list == .loaded([1, 2, 3]))
    }
    // The last mutation ended: the key is invalidated and the bound state refetches.
    await refetch.untilWaiting(1)
    #expect(fetches == 2)
    refetch.open()
    try await recorder.wait(for: .loaded([9]))
    let shownDuringMutations: [LoadableState<[Int]>] =
      firstFails ? [.loaded([1, 2]), .loaded([1, 2, 3]), .loaded([1, 3])] : [.loaded([1, 2]), .loaded([1, 2, 3])]
    #expect(recorder.values == shownDuringMutations + [.loaded([9])])
    #expect(cache.value(for: .list) == [9])
  }

  // MARK: Defect 2 — a released wrapper state leaves its entry at once

  /// Defect 2: a wrapper state that goes away is unbound at once, so `invalidate(prefix:)` runs no fetch for it
  /// (SPEC "Phase-3 rules made precise": "no fetch ever runs for a state that is gone").
  @Test func invalidatingThePrefixOfReleasedScreensRunsNoFetch() async throws {
    let cache = LoadCache(staleTime: .seconds(60), gcTime: .seconds(60), clock: clock)
    var runs = 0
    var screens: [DetailScreen] = []
    for i in 0..<20 {
      let screen = DetailScreen()
      await screen.$post.load(.post(i), in: cache) {
        runs += 1
        return i
      }
      screens.append(screen)
    }
    #expect(runs == 20)
    weak let released = screens[3]
    screens.removeAll()
    #expect(released == nil)

    cache.invalidate(prefix: "post")

    // The entry is stale, with no fetch in flight: a new screen's load shows the value and runs its own block.
    let screen = DetailScreen()
    let recorder = StateRecorder(screen.$post)
    var ownRuns = 0
    await screen.$post.load(.post(3), in: cache) {
      ownRuns += 1
      return 103
    }
    #expect(ownRuns == 1)
    #expect(recorder.values == [.loaded(3), .loaded(103)])
    #expect(runs == 20)  // no block of a released screen ran again
    #expect(cache.value(for: .post(5)) == 5)
  }

  /// Defect 2: the entries of released wrapper states become idle at once and are collected `gcTime` later (SPEC
  /// "Phase-3 rules made precise": "Its entry becomes idle then, and is collected gcTime later").
  @Test func theEntriesOfReleasedScreensAreCollectedAtGcTime() async throws {
    let cache = LoadCache(gcTime: .seconds(60), clock: clock)
    var screens: [DetailScreen] = []
    for i in 0..<20 {
      let screen = DetailScreen()
      await screen.$post.load(.post(i), in: cache) { i }
      screens.append(screen)
    }
    #expect(cache.count == 20)
    screens.removeAll()
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(60))
    await cache.nextCollection()
    #expect(cache.count == 0)
  }

  // MARK: Defect 3 — model.loadables.x of a @Loadable property

  /// Defect 3: `model.loadables.x.loadMore` on a `@Loadable` property appends the page like `$x.loadMore` and
  /// `loadMore(\.x)` (SPEC "Phase-3 rules made precise": every operation through every face).
  @Test(arguments: ["loadables", "loadables async", "wrapper", "wrapper async", "key path", "key path async"])
  func loadMoreAppendsThePageThroughEveryFaceOfAWrapperProperty(_ face: String) async throws {
    let model = WrapperModel()
    await model.$feed.load { Pages(items: [1, 2], nextCursor: 2) }
    let recorder = StateRecorder(model.$feed)
    var cursors: [Int] = []
    let next: @MainActor (Int) async throws -> Pages<Int, Int> = { cursor in
      cursors.append(cursor)
      return cursor == 2 ? Pages(items: [3, 4], nextCursor: 4) : Pages(items: [5], nextCursor: nil)
    }
    for _ in 0..<3 {  // the third call finds no more pages and does nothing
      switch face {
      case "loadables": await model.loadables.feed.loadMore(block: next).value
      case "loadables async": await model.loadables.feed.loadMore(block: next)
      case "wrapper": await model.$feed.loadMore(block: next).value
      case "wrapper async": await model.$feed.loadMore(block: next)
      case "key path": await model.loadMore(\.feed, block: next).value
      default: await model.loadMore(\.feed, block: next)
      }
    }
    #expect(cursors == [2, 4])
    #expect(
      recorder.values == [
        .loaded(Pages(items: [1, 2, 3, 4], nextCursor: 4)), .loaded(Pages(items: [1, 2, 3, 4, 5], nextCursor: nil)),
      ])
  }

  /// Defect 3: `model.loadables.x.load(key, in:)` and `refresh(key, in:)` on a `@Loadable` property bind the wrapper's
  /// state to the entry and load it (SPEC "Phase-3 rules made precise": every operation through every face).
  @Test func theCachedFacesOfLoadablesReachAWrapperProperty() async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let model = WrapperModel()
    let recorder = StateRecorder(model.$number)

    let task: Task<Void, Never> = model.loadables.number.load(.number(1), in: cache) { 5 }
    try await task.value(timeLimit: .seconds(30))
    #expect(model.number == .loaded(5))
    #expect(cache.value(for: .number(1)) == 5)
    cache.set(6, for: .number(1))  // bound: the entry's value reaches the state
    #expect(model.number == .loaded(6))

    await model.loadables.number.load(.number(2), in: cache) { 7 }
    #expect(model.number == .loaded(7))
    #expect(cache.value(for: .number(2)) == 7)
    cache.set(8, for: .number(2))
    #expect(model.number == .loaded(8))
    cache.set(60, for: .number(1))  // rebound to number 2: the first key no longer reaches it
    #expect(model.number == .loaded(8))

    await model.loadables.number.refresh(.number(2), in: cache) { 9 }
    #expect(cache.value(for: .number(2)) == 9)
    cache.set(10, for: .number(2))
    #expect(
      recorder.values == [.loading, .loaded(5), .loaded(6), .loading, .loaded(7), .loaded(8), .loaded(9), .loaded(10)])
  }

  // MARK: Defect 4 — a state showing the entry's value is not written again

  /// Defect 4: a wrapper state bound to a key and showing its value gets no write from a fresh hit nor at the start
  /// of `refresh(key, in:)` (SPEC "Phase-3 rules made precise": "no duplicate notification").
  @Test func aWrapperStateShowingTheEntrysValueIsNotWrittenAgain() async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let screen = DetailScreen()
    await screen.$post.load(.post(1), in: cache) { 1 }
    let recorder = StateRecorder(screen.$post)

    await screen.$post.load(.post(1), in: cache) {
      Issue.record("a fresh hit ran its block")
      return 0
    }
    #expect(recorder.values.isEmpty)

    let gate = Gate()
    let refresh: Task<Void, Never> = screen.$post.refresh(.post(1), in: cache) {
      await gate.wait()
      return 2
    }
    #expect(recorder.values.isEmpty)  // nothing written at its start
    await gate.untilWaiting(1)
    gate.open()
    try await refresh.value(timeLimit: .seconds(30))
    await screen.$post.refresh(.post(1), in: cache) { 3 }  // the async form
    #expect(recorder.values == [.loaded(2), .loaded(3)])
  }

  /// Defect 4: the same for a plain key-path property of an `ObservableModel` whose value is `Equatable` (SPEC
  /// "Phase-3 rules made precise": "no duplicate notification").
  @Test func aKeyPathStateShowingTheEntrysValueIsNotWrittenAgain() async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let model = PlainModel()
    await model.load(\.number, key: .number(1), in: cache) { 1 }
    let recorder = StateRecorder(model, \.number)

    await model.load(\.number, key: .number(1), in: cache) {
      Issue.record("a fresh hit ran its block")
      return 0
    }
    let hit: Task<Void, Never> = model.load(\.number, key: .number(1), in: cache) {
      Issue.record("a fresh hit ran its block")
      return 0
    }
    try await hit.value(timeLimit: .seconds(30))
    #expect(recorder.values.isEmpty)

    let gate = Gate()
    let refresh: Task<Void, Never> = model.refresh(\.number, key: .number(1), in: cache) {
      await gate.wait()
      return 2
    }
    #expect(recorder.values.isEmpty)  // nothing written at its start
    await gate.untilWaiting(1)
    gate.open()
    try await refresh.value(timeLimit: .seconds(30))
    await model.refresh(\.number, key: .number(1), in: cache) { 3 }
    #expect(recorder.values == [.loaded(2), .loaded(3)])
    #expect(model.number == .loaded(3))
  }

  /// Defect 4 (its last sentence): a plain `refresh` writes nothing at its start (SPEC "Phase-3 rules made precise":
  /// "Plain refresh likewise writes nothing at its start").
  @Test func aPlainRefreshWritesNothingAtItsStart() async throws {
    let screen = DetailScreen()
    let model = PlainModel()
    await screen.$post.load { 1 }
    await model.load(\.number) { 1 }
    let screenRecorder = StateRecorder(screen.$post)
    let modelRecorder = StateRecorder(model, \.number)
    let gate = Gate()
    let tasks: [Task<Void, Never>] = [
      screen.$post.refresh {
        await gate.wait()
        return 2
      },
      model.refresh(\.number) {
        await gate.wait()
        return 2
      },
    ]
    #expect(screenRecorder.values.isEmpty)
    #expect(modelRecorder.values.isEmpty)
    await gate.untilWaiting(2)
    gate.open()
    for task in tasks { try await task.value(timeLimit: .seconds(30)) }
    #expect(screenRecorder.values == [.loaded(2)])
    #expect(modelRecorder.values == [.loaded(2)])
  }

  // MARK: Defect 5 — a standalone actor-owned wrapper that goes away

  /// Defect 5: a standalone `IsolatedLoadable` that goes away cancels its running load and ends its `states` (SPEC
  /// "Phase-3 rules made precise": "as the main-actor wrappers do").
  @Test func aReleasedStandaloneIsolatedLoadableCancelsItsLoadAndEndsItsStates() async {
    let service = DetailService()
    let probe = BlockProbe()
    let collector = await service.loadAndDropTheState(probe)
    #expect(await probe.sawCancellation(), "the load of the released state was not cancelled")
    var seen: [LoadableState<Int>]?
    let ended = await SafetyLimit.within { seen = await collector.value }
    #expect(ended, "the states of the released state did not end")
    #expect(seen == [.loading])  // never .loaded
  }

  /// Defect 5: the same for a standalone `IsolatedProcess` (SPEC "Phase-3 rules made precise").
  @Test func aReleasedStandaloneIsolatedProcessCancelsItsRunAndEndsItsStates() async {
    let service = DetailService()
    let probe = BlockProbe()
    let process = SingleProcess(id: "sync")
    let collector = await service.runAndDropTheState(process, probe)
    #expect(await probe.sawCancellation(), "the run of the released state was not cancelled")
    var seen: [JobState]?
    let ended = await SafetyLimit.within { seen = await collector.value }
    #expect(ended, "the states of the released state did not end")
    #expect(seen == [.running(process)])  // never .finished
  }

  /// Defect 5, with no load running: a standalone `IsolatedLoadable` whose load has ended ends its `states` when it goes
  /// away, on its owner.
  @Test func aReleasedIdleStandaloneIsolatedLoadableEndsItsStates() async {
    let collector = await DetailService().loadToTheEndAndDropTheState()
    var seen: [LoadableState<Int>]?
    let ended = await SafetyLimit.within { seen = await collector.value }
    #expect(ended, "the states of the released state did not end")
    #expect(seen == [.absent, .loading, .loaded(1)])
  }

  /// Defect 5, the owner going away: the `states` of an actor's `@IsolatedLoadable` end when the actor is released
  /// with no load running (its `deinit` releases the wrapper, on whatever thread releases the actor last).
  @Test func theStatesOfAReleasedActorsIdleStateEnd() async {
    var holder: StateHolder? = StateHolder()
    let states = await holder!.states()
    let collector = Task {
      var seen: [LoadableState<Int>] = []
      for await element in states { seen.append(element) }
      return seen
    }
    await holder!.loadOnce()
    holder = nil
    var seen: [LoadableState<Int>]?
    let ended = await SafetyLimit.within { seen = await collector.value }
    #expect(ended, "the states of the released actor's state did not end")
    #expect(seen == [.absent, .loading, .loaded(7)])
  }

  // MARK: Defect 7 — one TestClock for a cache and its loads

  /// Defect 7: a cache's garbage collector never counts as a sleeper, so `waitForSleepers(1)` waits for the request
  /// on the clock the cache shares (SPEC "Phase-3 rules made precise": `ProcessedTesting`, a cache's own timers).
  @Test func waitForSleepersWaitsForTheRequestNotTheCachesCollector() async throws {
    for round in 0..<20 {
      let clock = TestClock()
      let cache = LoadCache(clock: clock)
      cache.set(0, for: .number(-1))  // idle: the collector sleeps on the clock until gcTime
      try await clock.waitForCacheTimers(1)
      let screen = DetailScreen()
      let recorder = StateRecorder(screen.$post)
      let task: Task<Void, Never> = screen.$post.load(.post(round), in: cache) {
        try await clock.sleep(for: .seconds(5))
        return round
      }
      try await clock.waitForSleepers(1)
      #expect(clock.sleeperCount == 1)
      #expect(clock.cacheTimerCount >= 1)
      clock.advance(by: .seconds(5))
      // A hang detector: under the thread sanitizer with the whole suite running, the main actor's queue is long (CI
      // once took over 10 s here); a correct round never comes near 300 s.
      let ended = await SafetyLimit.within(.seconds(300)) { await task.value }
      #expect(ended, "round \(round): the load did not end after the advance")
      guard ended else {
        clock.advance(by: .seconds(3600))  // let the stuck load end
        break
      }
      #expect(recorder.values == [.loading, .loaded(round)])
      #expect(cache.value(for: .post(round)) == round)
    }
  }
}

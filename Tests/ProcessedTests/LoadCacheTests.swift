import ProcessedTesting
import Testing

@testable import Processed

private struct Fetched: Error, Equatable { let code: Int }

private extension CacheKey where Value == Int {
  static func number(_ id: Int) -> Self { CacheKey("number", id) }
}

@MainActor
private final class Screen {
  @Loadable var number: LoadableState<Int>
}

@MainActor
private final class KeyPathScreen: LoadableSupport, ObservableModel {
  let observers = ObserverRegistry()
  var number: LoadableState<Int> = .absent
}

/// Hands the last reference to a cache to another thread.
private final class CacheBox: @unchecked Sendable {
  // `@unchecked`: written on the main actor, then once by a detached task the test awaits.
  var cache: LoadCache?
  init(_ cache: LoadCache) { self.cache = cache }
}

@MainActor
@Suite struct LoadCacheTests {
  let clock = TestClock()

  @Test func aMissIsAnOrdinaryLoadWhoseResultIsTheEntrys() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let recorder = StateRecorder(screen.$number)
    await screen.$number.load(.number(1), in: cache) { 7 }
    #expect(recorder.values == [.loading, .loaded(7)])
    #expect(cache.value(for: .number(1)) == 7)
    #expect(cache.count == 1)
  }

  @Test func aFreshHitIsWrittenInsideTheCallWithoutRunningTheBlock() async throws {
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    cache.set(5, for: .number(1))
    let screen = Screen()
    let recorder = StateRecorder(screen.$number)
    var ran = false
    let task: Task<Void, Never> = screen.$number.load(.number(1), in: cache) {
      ran = true
      return 6
    }
    #expect(recorder.values == [.loaded(5)])
    #expect(screen.$number.activity.phase == .idle)
    #expect(task == KeyPathTargetEnded.task)  // no task was started for the call
    await screen.$number.load(.number(1), in: cache) {
      ran = true
      return 7
    }
    #expect(recorder.values == [.loaded(5)])  // it shows the entry's value already: not written again
    #expect(!ran)
  }

  @Test func aStaleHitShowsTheValueThenFetchesInTheBackgroundWithoutLoading() async throws {
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    cache.set(5, for: .number(1))
    clock.advance(by: .seconds(10))  // stale at exactly staleTime
    let screen = Screen()
    let recorder = StateRecorder(screen.$number)
    let gate = Gate()
    let task: Task<Void, Never> = screen.$number.load(.number(1), in: cache) {
      await gate.wait()
      return 6
    }
    #expect(recorder.values == [.loaded(5)])
    #expect(screen.$number.activity.isActive)
    await gate.untilWaiting(1)
    gate.open()
    await task.value
    #expect(recorder.values == [.loaded(5), .loaded(6)])
    #expect(cache.value(for: .number(1)) == 6)
  }

  @Test func aStaleFetchThatFailsKeepsTheValueAndSetsLastError() async throws {
    let cache = LoadCache(clock: clock)
    cache.set(5, for: .number(1))
    let screen = Screen()
    await screen.$number.load(.number(1), in: cache) { throw Fetched(code: 1) }
    #expect(screen.number == .loaded(5))
    #expect(screen.$number.activity.lastError as? Fetched == Fetched(code: 1))
  }

  @Test func aHundredStatesLoadingOneKeyRunTheBlockOnce() async throws {
    let cache = LoadCache(clock: clock)
    let screens = (0..<100).map { _ in Screen() }
    let gate = Gate()
    var runs = 0
    let tasks = screens.map { screen in
      screen.$number.load(.number(1), in: cache) {
        runs += 1
        await gate.wait()
        return 42
      } as Task<Void, Never>
    }
    await gate.untilWaiting(1)
    gate.open()
    for task in tasks { await task.value }
    #expect(runs == 1)
    #expect(screens.allSatisfy { $0.number == .loaded(42) })
  }

  @Test func refreshRestartsARunningFetchAndTheOldAnswerIsNeverWritten() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let recorder = StateRecorder(screen.$number)
    let first = Gate()
    let second = Gate()
    let load: Task<Void, Never> = screen.$number.load(.number(1), in: cache) {
      await first.wait()  // ignores cancellation
      return 1
    }
    await first.untilWaiting(1)
    let refresh: Task<Void, Never> = screen.$number.refresh(.number(1), in: cache) {
      await second.wait()
      return 2
    }
    first.open()
    await load.value
    await second.untilWaiting(1)
    second.open()
    await refresh.value
    #expect(recorder.values.last == .loaded(2))
    #expect(!recorder.values.contains(.loaded(1)))
    #expect(cache.value(for: .number(1)) == 2)
  }

  @Test(arguments: ["set", "invalidate", "remove", "removeAll"])
  func laterCacheWritesMakeAnEarlierFetchStale(_ operation: String) async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let gate = Gate()
    var calls = 0
    let task: Task<Void, Never> = screen.$number.load(.number(1), in: cache) {
      calls += 1
      let call = calls
      await gate.wait()  // ignores cancellation
      return call  // 1, then 2 for an invalidation's refetch
    }
    await gate.untilWaiting(1)
    switch operation {
    case "set": cache.set(9, for: .number(1))
    case "invalidate": cache.invalidate(.number(1))
    case "remove": cache.remove(.number(1))
    default: cache.removeAll()
    }
    gate.open()
    await task.value
    #expect(screen.number != .loaded(1))
    #expect(cache.value(for: .number(1)) != 1)
  }

  /// The Task form's counterpart of `aCancelledCallerReturnsWithoutWaitingForTheFetchAndItsLoadEnds`: cancelling
  /// the returned task ends the state's waiting load at once (not the fetch, whose block ignores cancellation), and
  /// the state, still bound, gets the fetch's outcome.
  @Test func cancellingTheReturnedTaskEndsTheWaitButNotTheFetch() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let recorder = StateRecorder(screen.$number)
    let gate = Gate()
    let task: Task<Void, Never> = screen.$number.load(.number(1), in: cache) {
      await gate.wait()  // ignores cancellation
      return 3
    }
    await gate.untilWaiting(1)
    task.cancel()
    await task.value  // the block still waits at the gate
    #expect(gate.waiting == 1)
    #expect(screen.$number.activity.phase == .idle)
    #expect(recorder.values == [.loading])
    gate.open()
    try await recorder.wait(forCount: 2)
    #expect(recorder.values == [.loading, .loaded(3)])
    #expect(cache.value(for: .number(1)) == 3)
  }

  @Test func cancelOfOneOfTwoBoundStatesLeavesTheFetchRunningForTheOther() async throws {
    let cache = LoadCache(clock: clock)
    let (a, b) = (Screen(), Screen())
    let gate = Gate()
    let _: Task<Void, Never> = a.$number.load(.number(1), in: cache) {
      await gate.wait()
      return 3
    }
    let joined: Task<Void, Never> = b.$number.load(.number(1), in: cache) { 4 }
    a.$number.cancel()
    #expect(a.number == .loading)
    await gate.untilWaiting(1)
    gate.open()
    await joined.value
    #expect(b.number == .loaded(3))
    #expect(a.number == .loading)  // unbound: cancel leaves the state as it is
  }

  @Test func cancelOfEveryBoundStateCancelsTheFetchAndLeavesTheEntryAsItWas() async throws {
    let cache = LoadCache(clock: clock)
    cache.set(1, for: .number(1))
    cache.invalidate(.number(1))
    let (a, b) = (Screen(), Screen())
    let gate = Gate()
    let returned = Gate()
    var cancelled = false
    let _: Task<Void, Never> = a.$number.load(.number(1), in: cache) {
      await gate.wait()  // ignores cancellation
      cancelled = Task.isCancelled
      returned.open()  // the fetch's outcome is handled in this same main-actor turn
      return 2
    }
    let task: Task<Void, Never> = b.$number.load(.number(1), in: cache) { 3 }
    a.$number.cancel()
    #expect(cache.count == 1)
    b.$number.cancel()
    await gate.untilWaiting(1)
    gate.open()
    await task.value
    await returned.wait()
    #expect(cancelled)
    #expect(cache.value(for: .number(1)) == 1)
    #expect(a.number == .loaded(1) && b.number == .loaded(1))
  }

  @Test func setWritesEveryBoundStateAtOnce() async throws {
    let cache = LoadCache(clock: clock)
    let (a, b) = (Screen(), Screen())
    await a.$number.load(.number(1), in: cache) { 1 }
    await b.$number.load(.number(1), in: cache) { 2 }
    cache.set(5, for: .number(1))
    #expect(a.number == .loaded(5) && b.number == .loaded(5))
    // A manual write unbinds.
    a.number = .absent
    cache.set(6, for: .number(1))
    #expect(a.number == .absent && b.number == .loaded(6))
  }

  @Test func keyPathStatesShareTheEntry() async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let model = KeyPathScreen()
    let screen = Screen()
    await model.load(\.number, key: .number(1), in: cache) { 8 }
    await screen.$number.load(.number(1), in: cache) { 9 }
    #expect(model.number == .loaded(8))
    #expect(screen.number == .loaded(8))
    cache.set(10, for: .number(1))
    #expect(model.number == .loaded(10))
    model.reset(\.number)
    cache.set(11, for: .number(1))
    #expect(model.number == .absent)
    #expect(screen.number == .loaded(11))
  }

  @Test func anIdleEntryIsCollectedAtExactlyGcTime() async throws {
    let cache = LoadCache(gcTime: .seconds(60), clock: clock)
    let keeper = try await keepCollectorAwake(cache)
    cache.set(1, for: .number(1))
    #expect(cache.count == 2)
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(59))
    try await clock.waitForCacheTimers(1)
    #expect(cache.count == 2)
    clock.advance(by: .seconds(1))
    try await clock.waitForCacheTimers(1)  // the collector ran, and sleeps until the keeper's next check
    #expect(cache.count == 1)
    #expect(cache.value(for: .number(1)) == nil)
    _ = keeper
  }

  /// Binds a state to another key, so that the cache's collector always has a binding check to sleep for: after an
  /// `advance`, `waitForCacheTimers(1)` then returns once the collector has run.
  fileprivate func keepCollectorAwake(_ cache: LoadCache) async throws -> Screen {
    let keeper = Screen()
    await keeper.$number.load(.number(-1), in: cache) { 0 }
    return keeper
  }

  @Test func keysOfDifferentValueTypesNeverCollide() {
    let cache = LoadCache(clock: clock)
    cache.set(1, for: CacheKey<Int>("a"))
    cache.set("one", for: CacheKey<String>("a"))
    #expect(cache.value(for: CacheKey<Int>("a")) == 1)
    #expect(cache.value(for: CacheKey<String>("a")) == "one")
    #expect(cache.count == 2)
  }
}

extension LoadCacheTests {
  @Test func anEntryWhoseStatesWentAwayIsCollected() async throws {
    let cache = LoadCache(gcTime: .seconds(60), clock: clock)
    let keeper = try await keepCollectorAwake(cache)
    var screen: Screen? = Screen()
    await screen!.$number.load(.number(1), in: cache) { 1 }
    screen = nil
    #expect(cache.count == 2)
    // The released state is dropped at the latest by the binding check one gcTime after it was bound (sooner when the
    // cache meets its binding first: a state made later at the same address, say); its entry goes one gcTime after.
    for _ in 0..<2 where cache.count != 1 {
      try await clock.waitForCacheTimers(1)
      clock.advance(by: .seconds(60))
    }
    try await clock.waitForCacheTimers(1)
    #expect(cache.count == 1)
    #expect(cache.value(for: .number(1)) == nil)
    _ = keeper
  }

  @Test func aBoundEntryIsNeverCollected() async throws {
    let cache = LoadCache(gcTime: .seconds(60), clock: clock)
    let screen = Screen()
    await screen.$number.load(.number(1), in: cache) { 1 }
    for _ in 0..<3 {
      try await clock.waitForCacheTimers(1)
      clock.advance(by: .seconds(60))
    }
    try await clock.waitForCacheTimers(1)
    #expect(cache.count == 1)
    cache.set(2, for: .number(1))
    #expect(screen.number == .loaded(2))
  }
}

extension LoadCacheTests {
  @Test func aDebouncedCallDoesNothingToTheCacheUntilItStarts() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let recorder = StateRecorder(screen.$number)
    let options = LoadOptions(debounce: .trailing(.milliseconds(300)), clock: clock)
    var fetched: [Int] = []
    let first: Task<Void, Never> = screen.$number.load(.number(1), in: cache, options: options) {
      fetched.append(1)
      return 1
    }
    let second: Task<Void, Never> = screen.$number.load(.number(2), in: cache, options: options) {
      fetched.append(2)
      return 2
    }
    await first.value  // replaced during its debounce: never ran
    #expect(cache.count == 0)
    #expect(recorder.values.isEmpty)
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(300))
    await second.value
    #expect(fetched == [2])
    #expect(recorder.values == [.loading, .loaded(2)])
    #expect(cache.value(for: .number(2)) == 2)
    #expect(cache.value(for: .number(1)) == nil)
    // Bound once it started: a write of the entry reaches it.
    cache.set(3, for: .number(2))
    #expect(screen.number == .loaded(3))
  }

  @Test func aDebouncedCallOfAFreshValueWritesItOnceItsDebounceIsOver() async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    cache.set(5, for: .number(1))
    let screen = Screen()
    let recorder = StateRecorder(screen.$number)
    let options = LoadOptions(debounce: .trailing(.milliseconds(300)), clock: clock)
    var ran = false
    let task: Task<Void, Never> = screen.$number.load(.number(1), in: cache, options: options) {
      ran = true
      return 6
    }
    try await clock.waitForSleepers(1)
    #expect(recorder.values.isEmpty)
    clock.advance(by: .milliseconds(300))
    await task.value
    #expect(recorder.values == [.loaded(5)])
    #expect(!ran)
  }

  @Test func anObserverThatUnbindsALaterStateKeepsItFromBeingWritten() async throws {
    let cache = LoadCache(clock: clock)
    let (a, b) = (Screen(), Screen())
    await a.$number.load(.number(1), in: cache) { 1 }
    await b.$number.load(.number(1), in: cache) { 1 }
    let token = a.$number.observe { state in
      if state == .loaded(2) { b.$number.reset() }
    }
    cache.set(2, for: .number(1))
    #expect(a.number == .loaded(2))
    #expect(b.number == .absent)  // reset by a's observer before the entry reached it: never written after
    token.cancel()
  }

  /// A wrapper's state keeps its binding itself; the cache only counts it while it is bound (the engine's unbinding
  /// hook runs while any state is bound). Synchronous, so that no other test's states are bound meanwhile.
  @Test func aBoundWrapperStateIsCountedUntilItLeaves() {
    let cache = LoadCache(clock: clock)
    cache.set(1, for: .number(1))
    let (a, b) = (Screen(), Screen())
    let before = CacheBindings.keptBound
    let _: Task<Void, Never> = a.$number.load(.number(1), in: cache) { 2 }
    let _: Task<Void, Never> = b.$number.load(.number(1), in: cache) { 2 }
    let _: Task<Void, Never> = b.$number.load(.number(1), in: cache) { 2 }  // bound already: counted once
    #expect(CacheBindings.keptBound == before + 2)
    #expect(CacheBindings.table[BoundStateID(a.$number.storage, nil)] == nil)  // not in the table
    a.$number.cancel()
    #expect(CacheBindings.keptBound == before + 1)
    cache.remove(.number(1))
    #expect(CacheBindings.keptBound == before)
    #expect(a.number == .loaded(1) && b.number == .loaded(1))  // unbound: they keep what they show
  }

  @Test func aReleasedCacheUnbindsItsStatesAndItsFetchNeverWrites() async throws {
    let box = CacheBox(LoadCache(clock: clock))
    let screen = Screen()
    let recorder = StateRecorder(screen.$number)
    let (gate, returned) = (Gate(), Gate())
    let task: Task<Void, Never> = screen.$number.load(.number(1), in: box.cache!) {
      await gate.wait()  // ignores cancellation
      returned.open()
      return 1
    }
    await gate.untilWaiting(1)
    weak let store = box.cache?.store
    box.cache = nil  // its store closes on the main actor, as `removeAll()` would
    for _ in 0..<100 where store?.isClosed == false { await Task.yield() }
    try #require(store?.isClosed == true)
    await task.value  // the state was unbound: its load ended
    gate.open()
    await returned.wait()
    #expect(screen.number == .loading)  // kept what it showed
    #expect(!recorder.values.contains(.loaded(1)))
    for _ in 0..<100 where store != nil { await Task.yield() }  // the fetch's task lets go of its entry
    #expect(store == nil)  // no cycle left behind
  }

  @Test func aCacheReleasedOffTheMainActorStopsItsCollector() async throws {
    let box = CacheBox(LoadCache(gcTime: .seconds(60), clock: clock))
    box.cache?.set(1, for: .number(1))
    try await clock.waitForCacheTimers(1)
    let collector = box.cache?.store.collector
    await Task.detached { box.cache = nil }.value  // the last reference goes on another thread
    await collector?.value  // cancelled when the store closes (asked for by deinit): the sleep throws
    #expect(clock.cacheTimerCount == 0)
  }

}

extension LoadCacheTests {
  @Test func aFailureWithNoValueIsAnErrorForEveryBoundState() async throws {
    let cache = LoadCache(clock: clock)
    let (a, b) = (Screen(), Screen())
    let gate = Gate()
    let first: Task<Void, Never> = a.$number.load(.number(1), in: cache) {
      await gate.wait()
      throw Fetched(code: 7)
    }
    let joined: Task<Void, Never> = b.$number.load(.number(1), in: cache) { 0 }
    #expect(a.number == .loading && b.number == .loading)  // a joining state is written as if it had started it
    await gate.untilWaiting(1)
    gate.open()
    await first.value
    await joined.value
    #expect(a.number == .error(Fetched(code: 7)))
    #expect(b.number == .error(Fetched(code: 7)))
    #expect(cache.value(for: .number(1)) == nil)
    #expect(cache.count == 1)  // an entry with a last error exists
  }

  @Test func theEntrysFetchRetriesWithTheCallsOptions() async throws {
    let cache = LoadCache(clock: clock)
    let screen = Screen()
    let recorder = StateRecorder(screen.$number)
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 2), clock: clock)
    var attempts = 0
    let task: Task<Void, Never> = screen.$number.load(.number(1), in: cache, options: options) {
      attempts += 1
      if attempts < 3 { throw Fetched(code: attempts) }
      return 42
    }
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    await task.value
    #expect(attempts == 3)
    #expect(recorder.values == [.loading, .loaded(42)])  // nothing written between attempts
    #expect(cache.value(for: .number(1)) == 42)
  }

  @Test func aModelsLoadablesControllerLoadsFromTheCache() async throws {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    cache.set(3, for: .number(1))
    let model = KeyPathScreen()
    let recorder = StateRecorder(model, \.number)
    let task: Task<Void, Never> = model.loadables.number.load(.number(1), in: cache) { 4 }
    #expect(task == KeyPathTargetEnded.task)
    #expect(recorder.values == [.loaded(3)])
    cache.set(5, for: .number(1))
    #expect(recorder.values == [.loaded(3), .loaded(5)])
    model.loadables.number.cancel()  // unbinds; the state stays as it is
    cache.set(6, for: .number(1))
    #expect(model.number == .loaded(5))
  }
}

extension LoadCacheTests {
  /// Found by `LoadCacheModelTests`: a state that took a fresh value while the entry was fetching is bound, so it waits
  /// for that fetch too — the last other state leaving does not cancel it.
  @Test func aStateThatTookAFreshValueDuringAFetchStillGetsItsAnswer() async throws {
    let cache = LoadCache(clock: clock)
    let (a, b) = (Screen(), Screen())
    await a.$number.load(.number(1), in: cache) { 1 }
    await b.$number.load(.number(1), in: cache) { 1 }
    let gate = Gate()
    let refresh: Task<Void, Never> = a.$number.refresh(.number(1), in: cache) {
      await gate.wait()
      return 2
    }
    let fresh = LoadOptions(staleTime: .seconds(1_000))
    let hit: Task<Void, Never> = a.$number.load(.number(1), in: cache, options: fresh) { 3 }
    #expect(hit == KeyPathTargetEnded.task)
    b.$number.cancel()
    await gate.untilWaiting(1)
    let recorder = StateRecorder(a.$number)
    gate.open()
    await refresh.value  // superseded by the hit: ended already
    try await recorder.wait(forCount: 1, timeLimit: .seconds(5))
    #expect(recorder.values == [.loaded(2)])
    #expect(cache.value(for: .number(1)) == 2)
  }
}

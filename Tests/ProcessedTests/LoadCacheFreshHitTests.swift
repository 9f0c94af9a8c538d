import ProcessedTesting
import Testing

@testable import Processed

private extension CacheKey where Value == Int {
  static func number(_ id: Int) -> Self { CacheKey("number", id) }
}

private struct HitFailure: Error {}

@MainActor
private final class Screen {
  @Loadable var number: LoadableState<Int>
}

@MainActor
private final class Model: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  @Loadable var number: LoadableState<Int>
}

/// The fresh hit of a state already bound to its key (`CachedLoad.freshHit`, the inlined path) does what the general
/// path does, and leaves every other case to it: another cache, another key, an invalidated or stale value, a
/// debounce. Also: key components of the common types hash and compare as `AnyHashable` does.
@MainActor
@Suite struct LoadCacheFreshHitTests {
  let clock = TestClock()

  @Test func aBoundStateHitsAgainWithoutRunningTheBlockAndStaysBound() async {
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    cache.set(1, for: .number(1))
    let screen = Screen()
    let recorder = StateRecorder(screen.$number)
    for _ in 0..<3 {
      let task: Task<Void, Never> = screen.$number.load(.number(1), in: cache) {
        Issue.record("ran")
        return 0
      }
      #expect(task == KeyPathTargetEnded.task)
    }
    // Written once: a state that shows the entry's value already is not written again.
    #expect(recorder.values == [.loaded(1)])
    cache.set(2, for: .number(1))  // still bound
    #expect(screen.number == .loaded(2))
  }

  /// The inlined hit publishes the activity only when it changes it: by clearing the error a failed refetch kept.
  @Test func aHitClearsAKeptErrorAndLeavesAnUnchangedActivityUnpublished() async {
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    cache.set(1, for: .number(1))
    let screen = Screen()
    await screen.$number.load(.number(1), in: cache) { 0 }  // binds
    let activity = StateRecorder(activityOf: screen.$number)
    await screen.$number.load(.number(1), in: cache) { 0 }  // the inlined hit, nothing to clear
    #expect(activity.values.isEmpty)
    await screen.$number.refresh(.number(1), in: cache) { throw HitFailure() }
    #expect(screen.number == .loaded(1))
    #expect(screen.$number.activity.lastError is HitFailure)
    let beforeHit = activity.values.count
    await screen.$number.load(.number(1), in: cache) { 0 }  // fresh: written before the refresh, not invalidated
    #expect(screen.$number.activity.lastError == nil)
    #expect(activity.values.count == beforeHit + 1)
    #expect(activity.values.last?.lastError == nil)
    #expect(activity.values.last?.isActive == false)
  }

  @Test func aWrapperReachedThroughItsKeyPathHitsAsItsController() async {
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    cache.set(1, for: .number(1))
    let model = Model()
    let recorder = StateRecorder(model.$number)
    let modelChanges = StateRecorder(model, \.number)
    let first: Task<Void, Never> = model.load(\.number, key: .number(1), in: cache) { 0 }
    let second: Task<Void, Never> = model.$number.load(.number(1), in: cache) { 0 }
    await model.load(\.number, key: .number(1), in: cache) { 0 }
    #expect(first == KeyPathTargetEnded.task && second == KeyPathTargetEnded.task)
    #expect(recorder.values == [.loaded(1)])
    #expect(modelChanges.values == recorder.values)
    cache.set(2, for: .number(1))
    #expect(model.number == .loaded(2))
  }

  @Test func theSameKeyInAnotherCacheIsAnotherEntry() async {
    let (first, second) = (LoadCache(staleTime: .seconds(10), clock: clock), LoadCache(clock: clock))
    first.set(1, for: .number(1))
    let screen = Screen()
    let _: Task<Void, Never> = screen.$number.load(.number(1), in: first) { 0 }
    await screen.$number.load(.number(1), in: second) { 2 }
    #expect(screen.number == .loaded(2))
    first.set(3, for: .number(1))  // unbound from the first cache's entry
    #expect(screen.number == .loaded(2))
    second.set(4, for: .number(1))
    #expect(screen.number == .loaded(4))
  }

  @Test func anotherKeyRebinds() async {
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    cache.set(1, for: .number(1))
    cache.set(2, for: .number(2))
    let screen = Screen()
    let _: Task<Void, Never> = screen.$number.load(.number(1), in: cache) { 0 }
    let _: Task<Void, Never> = screen.$number.load(.number(2), in: cache) { 0 }
    #expect(screen.number == .loaded(2))
    cache.set(3, for: .number(1))
    #expect(screen.number == .loaded(2))
  }

  @Test func anInvalidatedOrStaleValueOfTheBoundEntryFetches() async {
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    cache.set(1, for: .number(1))
    let screen = Screen()
    let _: Task<Void, Never> = screen.$number.load(.number(1), in: cache) { 0 }
    cache.invalidate(.number(1))  // refetches with the recorded block
    await until(.changes(of: screen.$number)) { screen.number == .loaded(0) }
    clock.advance(by: .seconds(11))
    await screen.$number.load(.number(1), in: cache) { 5 }
    #expect(screen.number == .loaded(5))
    await screen.$number.load(.number(1), in: cache, options: LoadOptions(staleTime: .zero)) { 6 }
    #expect(screen.number == .loaded(6))
  }

  /// An entry that never fetched refetches on `invalidate` with the block and options of the last call that bound a
  /// state to it — a fresh hit of a state already bound (the inlined path) included; once it has fetched, with those of
  /// its last fetch.
  @Test func anEntryThatNeverFetchedRefetchesWithTheLastBindingCallsBlockAndOptions() async throws {
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    cache.set(1, for: .number(1))
    let (a, b) = (Screen(), Screen())
    let runs = StateRecorder<Int>()
    let _: Task<Void, Never> = a.$number.load(.number(1), in: cache) {
      runs.record(10)
      return 10
    }
    let _: Task<Void, Never> = b.$number.load(.number(1), in: cache) {
      runs.record(20)
      return 20
    }
    // A binds again: a fresh hit of a bound state, which records this call's block and options (a retry).
    let retrying = LoadOptions(retry: .constant(.seconds(1), maxRetries: 1), clock: clock)
    let _: Task<Void, Never> = a.$number.load(.number(1), in: cache, options: retrying) {
      runs.record(30)
      if runs.values.count == 1 { throw HitFailure() }
      return 30
    }
    #expect(runs.values.isEmpty)
    cache.invalidate(.number(1))
    try await clock.waitForSleepers(1)  // the recorded options' retry
    #expect(runs.values == [30])
    clock.advance(by: .seconds(1))
    let aStates = StateRecorder(a.$number)
    try await aStates.wait(for: .loaded(30))
    #expect(b.number == .loaded(30))
    #expect(runs.values == [30, 30])
    // Fetched: a binding call no longer replaces the block; `invalidate` runs the last fetch's.
    let _: Task<Void, Never> = b.$number.load(.number(1), in: cache) {
      runs.record(40)
      return 40
    }
    cache.invalidate(.number(1))
    try await runs.wait(forHistory: [30, 30, 30])
    #expect(cache.value(for: .number(1)) == 30)
  }

  @Test func theCallsStaleTimeDecides() async {
    let cache = LoadCache(staleTime: .zero, clock: clock)
    cache.set(1, for: .number(1))
    let screen = Screen()
    await screen.$number.load(.number(1), in: cache) { 2 }  // binds; stale: fetches
    #expect(screen.number == .loaded(2))
    var ran = false
    let task: Task<Void, Never> = screen.$number.load(
      .number(1), in: cache, options: LoadOptions(staleTime: .seconds(10))
    ) {
      ran = true
      return 3
    }
    #expect(task == KeyPathTargetEnded.task)
    #expect(!ran && screen.number == .loaded(2))
  }

  @Test func aDebouncedCallOfABoundStateWaitsOutItsDebounce() async throws {
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    cache.set(1, for: .number(1))
    let screen = Screen()
    let _: Task<Void, Never> = screen.$number.load(.number(1), in: cache) { 0 }
    cache.set(2, for: .number(1))
    let options = LoadOptions(debounce: .trailing(.seconds(1)), clock: clock)
    let task: Task<Void, Never> = screen.$number.load(.number(1), in: cache, options: options) { 0 }
    #expect(task != KeyPathTargetEnded.task)  // not the inlined hit
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    await task.value
    #expect(screen.number == .loaded(2))
  }

  @Test func keyComponentsHashAndCompareAsAnyHashable() {
    let keys: [CacheKey<Int>] = [
      CacheKey("p", 1), CacheKey("p", Int64(1)), CacheKey("p", UInt8(1)),
    ]
    for key in keys {
      #expect(key == keys[0])
      #expect(key.hashValue == keys[0].hashValue)
      #expect(key.components.map(\.hashValue) == keys[0].components.map(\.hashValue))
    }
    #expect(Set(keys).count == 1)
    #expect(CacheKey<Int>("p", -1) == CacheKey<Int>("p", Int64(-1)))
    #expect(CacheKey<Int>("p", -1).hashValue == CacheKey<Int>("p", Int64(-1)).hashValue)
    #expect(CacheKey<Int>("p", 1) != CacheKey<Int>("p", "1"))
    #expect(CacheKey<Int>("p", 1.5) == CacheKey<Int>("p", 1.5))
    #expect(CacheKey<Int>("p", Double.nan) != CacheKey<Int>("p", Double.nan))
    #expect(CacheKey<Int>("p", 1, "x", 2).components == ["p", 1, "x", 2])
  }
}

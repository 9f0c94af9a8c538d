import ProcessedTesting
import Testing

@testable import Processed

// When a state stops following its cache entry (SPEC, Phase 3, "Shared cache"), prefix invalidation across value
// types, what `count` counts, and that a fetch of an entry with a value never writes `.loading`.

private struct Failed: Error, Equatable {}

extension CacheKey where Value == Int {
  fileprivate static func item(_ id: Int) -> Self { CacheKey("item", id) }
}

@MainActor
private final class IntScreen {
  @Loadable var number: LoadableState<Int>
}

@MainActor
private final class StringScreen {
  @Loadable var text: LoadableState<String>
}

@MainActor
private final class IntModel: LoadableSupport {
  var number: LoadableState<Int> = .absent
}

@MainActor
@Suite struct LoadCacheUnbindingTests {
  let clock = TestClock()

  // MARK: Unbinding

  @Test func aPlainLoadUnbinds() async {
    let cache = LoadCache(clock: clock)
    let screen = IntScreen()
    await screen.$number.load(.item(1), in: cache) { 1 }
    await screen.$number.load { 2 }
    cache.set(9, for: .item(1))
    #expect(screen.number == .loaded(2))
  }

  @Test func aPlainRefreshUnbinds() async {
    let cache = LoadCache(clock: clock)
    let screen = IntScreen()
    await screen.$number.load(.item(1), in: cache) { 1 }
    await screen.$number.refresh { 2 }
    cache.set(9, for: .item(1))
    #expect(screen.number == .loaded(2))
  }

  @Test func aLoadOfAnotherKeyRebinds() async {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let screen = IntScreen()
    await screen.$number.load(.item(1), in: cache) { 1 }
    await screen.$number.load(.item(2), in: cache) { 2 }
    cache.set(9, for: .item(1))
    #expect(screen.number == .loaded(2))
    cache.set(8, for: .item(2))
    #expect(screen.number == .loaded(8))
  }

  @Test func cancelUnbindsAndLeavesTheState() async {
    let cache = LoadCache(clock: clock)
    let screen = IntScreen()
    await screen.$number.load(.item(1), in: cache) { 1 }
    screen.$number.cancel()
    #expect(screen.number == .loaded(1))
    cache.set(9, for: .item(1))
    #expect(screen.number == .loaded(1))
  }

  @Test func resetUnbinds() async {
    let cache = LoadCache(clock: clock)
    let screen = IntScreen()
    let model = IntModel()
    await screen.$number.load(.item(1), in: cache) { 1 }
    await model.load(\.number, key: .item(1), in: cache) { 2 }
    screen.$number.reset()
    model.reset(\.number)
    cache.set(9, for: .item(1))
    #expect(screen.number == .absent)
    #expect(model.number == .absent)
  }

  @Test func aManualWriteThroughTheWrapperUnbinds() async {
    let cache = LoadCache(clock: clock)
    let screen = IntScreen()
    await screen.$number.load(.item(1), in: cache) { 1 }
    screen.number = .loaded(5)
    cache.set(9, for: .item(1))
    #expect(screen.number == .loaded(5))
  }

  @Test func aResetThroughTheLoadablesControllerUnbinds() async {
    let cache = LoadCache(clock: clock)
    let model = IntModel()
    await model.load(\.number, key: .item(1), in: cache) { 1 }
    model.loadables.number.reset()
    cache.set(9, for: .item(1))
    #expect(model.number == .absent)
  }

  /// A released key-path model is dropped when the cache next writes its entry: the entry then becomes idle and is
  /// collected at gcTime. The cache does not keep the model alive.
  @Test func aReleasedKeyPathOwnerIsDroppedOnTheNextWrite() async throws {
    let cache = LoadCache(gcTime: .seconds(10), clock: clock)
    var model: IntModel? = IntModel()
    weak let released = model
    await model!.load(\.number, key: .item(1), in: cache) { 1 }
    model = nil
    #expect(released == nil)
    cache.set(2, for: .item(1))  // finds the owner gone
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(10))
    await cache.nextCollection()
    #expect(cache.count == 0)
  }

  /// The same for a `@Loadable` property whose owner is released.
  @Test func aReleasedWrapperOwnerIsDroppedOnTheNextWrite() async throws {
    let cache = LoadCache(gcTime: .seconds(10), clock: clock)
    var screen: IntScreen? = IntScreen()
    weak let released = screen
    await screen!.$number.load(.item(1), in: cache) { 1 }
    screen = nil
    #expect(released == nil)
    cache.set(2, for: .item(1))
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(10))
    await cache.nextCollection()
    #expect(cache.count == 0)
  }

  /// A bound state keeps its entry: it is never collected while the state follows it.
  @Test func aBoundEntryIsNotCollected() async throws {
    let cache = LoadCache(gcTime: .seconds(10), clock: clock)
    let screen = IntScreen()
    await screen.$number.load(.item(1), in: cache) { 1 }
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(60))
    await cache.nextCollection()
    #expect(cache.count == 1)
    screen.$number.reset()  // idle from now
    try await clock.waitForCacheTimers(1)
    clock.advance(by: .seconds(10))
    await cache.nextCollection()
    #expect(cache.count == 0)
  }

  // MARK: Prefix invalidation

  @Test func invalidatePrefixMatchesKeysOfEveryValueType() async {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let (a, b, c) = (IntScreen(), StringScreen(), IntScreen())
    var runs = (a: 0, b: 0, c: 0)
    await a.$number.load(CacheKey("p", 1), in: cache) {
      runs.a += 1
      return runs.a
    }
    await b.$text.load(CacheKey("p", "x"), in: cache) {
      runs.b += 1
      return "b\(runs.b)"
    }
    await c.$number.load(CacheKey("q", 1), in: cache) {
      runs.c += 1
      return runs.c
    }
    cache.invalidate(prefix: "p")
    await until(.changes(of: b.$text)) { b.text == .loaded("b2") }
    await until(.changes(of: a.$number)) { a.number == .loaded(2) }
    #expect(runs.c == 1)

    // Two components: only the Int key; `Int64(1)` matches `1` (components compare as AnyHashable).
    cache.invalidate(prefix: "p", Int64(1))
    await until(.changes(of: a.$number)) { a.number == .loaded(3) }
    #expect(runs.b == 2)

    // An empty prefix matches every key.
    cache.invalidate()  // `invalidate(prefix:)` with no component
    await until(.changes(of: c.$number)) { c.number == .loaded(2) }
  }

  @Test func keysCompareTheirComponentsAsAnyHashable() {
    #expect(CacheKey<Int>("p", 1) == CacheKey<Int>("p", Int64(1)))
    #expect(CacheKey<Int>("p", 1) != CacheKey<Int>(1, "p"))
    #expect(CacheKey<Int>("p", 1).description == "CacheKey<Int>(p, 1)")
  }

  // MARK: count

  @Test func countCountsEntriesThatExist() async throws {
    let cache = LoadCache(gcTime: .seconds(10), clock: clock)
    #expect(cache.count == 0)
    _ = cache.value(for: .item(1))  // reading creates nothing
    #expect(cache.count == 0)
    cache.set(1, for: .item(1))  // a value
    #expect(cache.count == 1)

    let screen = IntScreen()
    let gate = Gate()
    let task: Task<Void, Never> = screen.$number.load(.item(2), in: cache) {
      await gate.wait()
      throw Failed()
    }
    #expect(cache.count == 2)  // a bound state and a fetch in flight, no value
    await gate.untilWaiting(1)
    gate.open()
    await task.value
    #expect(screen.number == .error(Failed()))
    screen.$number.reset()
    #expect(cache.count == 2)  // a last error alone keeps the entry

    cache.remove(.item(1))
    #expect(cache.count == 1)
    cache.removeAll()
    #expect(cache.count == 0)
  }

  // MARK: No .loading when the entry has a value

  @Test func refreshOfAnEntryWithAValueWritesNoLoading() async {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    cache.set(5, for: .item(1))
    let screen = IntScreen()
    let recorder = StateRecorder(screen.$number)
    let gate = Gate()
    let task: Task<Void, Never> = screen.$number.refresh(.item(1), in: cache) {
      await gate.wait()
      return 6
    }
    #expect(recorder.values == [.loaded(5)])
    #expect(screen.$number.activity.isActive)
    await gate.untilWaiting(1)
    gate.open()
    await task.value
    #expect(recorder.values == [.loaded(5), .loaded(6)])
    #expect(!recorder.values.contains(.loading))
  }

  @Test func refreshOfAMissIsAnOrdinaryLoad() async {
    let cache = LoadCache(clock: clock)
    let model = IntModel()
    await model.refresh(\.number, key: .item(1), in: cache) { 4 }
    #expect(model.number == .loaded(4))
    #expect(cache.value(for: .item(1)) == 4)
  }

  @Test func anInvalidationRefetchWritesNoLoading() async {
    let cache = LoadCache(staleTime: .seconds(60), clock: clock)
    let screen = IntScreen()
    var runs = 0
    await screen.$number.load(.item(1), in: cache) {
      runs += 1
      return runs
    }
    let recorder = StateRecorder(screen.$number)
    cache.invalidate(.item(1))
    await until(.changes(of: screen.$number)) { screen.number == .loaded(2) }
    #expect(recorder.values == [.loaded(2)])
  }
}

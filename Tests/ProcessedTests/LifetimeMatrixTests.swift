import ProcessedTesting
import Testing

@testable import Processed

/// Every cache operation after each kind of owner of a bound state went away: nothing may run, write or stay for it
/// (spec, "Phase-3 rules made precise": "A state that goes away is unbound at once: a wrapper's storage when its last
/// copy goes; a key-path state's owner at the latest when the cache next touches or sweeps its entry — and
/// `invalidate`/`invalidateAll`/`invalidate(prefix:)` touch it: no fetch ever runs for a state that is gone. Its entry
/// becomes idle then, and is collected `gcTime` later.")
@MainActor
@Suite struct LifetimeMatrixTests {
  @MainActor
  final class Model: ObservableModel, LoadableSupport {
    let observers = ObserverRegistry()
    @Loadable var wrapped: LoadableState<Int>
    var plain: LoadableState<Int> = .absent
  }

  /// Who owns the bound state, and how it was bound.
  enum Owner: String, CaseIterable, CustomTestStringConvertible {
    /// `let state = Loadable<Int>()`, bound through `state.projectedValue`.
    case standaloneWrapper
    /// A model's `@Loadable` property, bound through `$wrapped`.
    case modelWrapper
    /// A model's `@Loadable` property, bound through `load(\.wrapped, key:in:)`.
    case modelWrapperByKeyPath
    /// A model's plain property, bound through `load(\.plain, key:in:)`.
    case keyPathModel
    /// A model's plain property, bound through `model.loadables.plain`.
    case keyPathModelLoadables

    var testDescription: String { rawValue }

    /// Whether the owner is a key-path state's: unbound when the cache next touches or sweeps its entry, not at once.
    var isKeyPath: Bool { self == .keyPathModel || self == .keyPathModelLoadables }

    /// Makes an owner, binds its state to `key` (a miss: `block` runs once) and returns a weak reference to it.
    @MainActor
    func bind(
      _ key: CacheKey<Int>, in cache: LoadCache, _ block: @escaping @MainActor () async throws -> Int
    ) async -> @MainActor @Sendable () -> AnyObject? {
      switch self {
      case .standaloneWrapper:
        let state = Loadable<Int>()
        await state.projectedValue.load(key, in: cache, block: block)
        weak let storage = state.projectedValue.storage
        return { storage }
      case .modelWrapper, .modelWrapperByKeyPath, .keyPathModel, .keyPathModelLoadables:
        let model = Model()
        switch self {
        case .modelWrapper: await model.$wrapped.load(key, in: cache, block: block)
        case .modelWrapperByKeyPath: await model.load(\.wrapped, key: key, in: cache, block: block)
        case .keyPathModel: await model.load(\.plain, key: key, in: cache, block: block)
        default: await model.loadables.plain.load(key, in: cache, block: block)
        }
        weak let released = model
        return { released }
      }
    }

    /// Makes an owner and starts a Task-form load of its state from `key` (a miss); the owner goes when this returns.
    @MainActor
    func start(
      _ key: CacheKey<Int>, in cache: LoadCache, _ block: @escaping @MainActor () async throws -> Int
    ) -> (@MainActor @Sendable () -> AnyObject?, Task<Void, Never>) {
      switch self {
      case .standaloneWrapper:
        let state = Loadable<Int>()
        let task = state.projectedValue.load(key, in: cache, block: block)
        weak let storage = state.projectedValue.storage
        return ({ storage }, task)
      case .modelWrapper, .modelWrapperByKeyPath, .keyPathModel, .keyPathModelLoadables:
        let model = Model()
        let task: Task<Void, Never> =
          switch self {
          case .modelWrapper: model.$wrapped.load(key, in: cache, block: block)
          case .modelWrapperByKeyPath: model.load(\.wrapped, key: key, in: cache, block: block)
          case .keyPathModel: model.load(\.plain, key: key, in: cache, block: block)
          default: model.loadables.plain.load(key, in: cache, block: block)
          }
        weak let released = model
        return ({ released }, task)
      }
    }
  }

  /// What the cache does after the owner went.
  enum Operation: String, CaseIterable, CustomTestStringConvertible {
    case invalidate, invalidatePrefix, invalidateAll, set, mutate, gc
    var testDescription: String { rawValue }
  }

  nonisolated static let arguments = Owner.allCases.flatMap { owner in Operation.allCases.map { (owner, $0) } }

  @Test(arguments: arguments)
  func nothingRunsWritesOrStaysForAStateThatWentAway(_ owner: Owner, _ operation: Operation) async throws {
    let clock = TestClock()
    let cache = LoadCache(gcTime: .seconds(60), clock: clock)
    let key = CacheKey<Int>("item", 1)
    var runs = 0
    let alive = await owner.bind(key, in: cache) {
      runs += 1
      return runs
    }
    #expect(alive() == nil)  // the cache and the entry keep no owner alive
    #expect(runs == 1)
    switch operation {
    case .invalidate: cache.invalidate(key)
    case .invalidatePrefix: cache.invalidate(prefix: "item")
    case .invalidateAll: cache.invalidateAll()
    case .set: cache.set(10, for: key)
    case .mutate: _ = try await cache.mutate(key, optimistic: { $0 += 1 }) { 0 }
    case .gc: break
    }
    #expect(runs == 1, "a fetch ran for a state that is gone")
    #expect(cache.store.entry(for: key)?.isFetching != true)
    // Idle now (a key-path owner at the latest at the entry's binding check, one `gcTime` after it was bound):
    // collected `gcTime` later.
    for _ in 0..<(owner.isKeyPath && operation == .gc ? 2 : 1) {
      try await clock.waitForCacheTimers(1)
      clock.advance(by: .seconds(60))
      await cache.nextCollection()
    }
    #expect(cache.count == 0)
    #expect(runs == 1)
  }

  /// An owner that goes away while its fetch runs: the fetch is cancelled (no bound state waits for it), writes
  /// nothing, and the entry stays as it was.
  @Test(arguments: Owner.allCases.filter { !$0.isKeyPath })
  func aFetchInFlightForAStateThatWentAwayIsCancelled(_ owner: Owner) async throws {
    let cache = LoadCache(gcTime: .seconds(60), clock: TestClock())
    let key = CacheKey<Int>("item", 1)
    let gate = Gate()
    var sawCancellation = false
    var ended = false
    let (alive, task) = owner.start(key, in: cache) {
      await gate.wait()
      sawCancellation = Task.isCancelled
      ended = true
      return 1
    }
    await gate.untilWaiting(1)
    #expect(alive() == nil)  // the load's task does not keep its owner
    try await task.value(timeLimit: .seconds(30))  // the state was unbound: its wait ended
    gate.open()
    for _ in 0..<1_000 where !ended { await Task.yield() }
    #expect(sawCancellation)
    #expect(cache.value(for: key) == nil)
    #expect(cache.store.entry(for: key)?.isFetching != true)
  }

  /// The cache that goes away: its states are unbound and keep what they show; nothing it held stays.
  @Test func aCacheThatWentAwayLeavesNothing() async throws {
    var cache: LoadCache? = LoadCache(clock: TestClock())
    let model = Model()
    await model.$wrapped.load(CacheKey<Int>("item", 1), in: cache!) { 1 }
    await model.load(\.plain, key: CacheKey<Int>("item", 2), in: cache!) { 2 }
    weak let store = cache?.store
    cache = nil
    for _ in 0..<100 where store != nil { await Task.yield() }
    #expect(store == nil)
    #expect(model.wrapped == .loaded(1) && model.plain == .loaded(2))
    model.$wrapped.cancel()  // a state with no entry: nothing to unbind, nothing breaks
    await model.$wrapped.load { 3 }
    #expect(model.wrapped == .loaded(3))
  }
}

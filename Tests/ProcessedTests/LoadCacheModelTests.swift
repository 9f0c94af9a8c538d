import ProcessedTesting
import Testing

@testable import Processed

/// A seeded, reproducible model-based test of the shared cache (SPEC, Phase 3, "Shared cache" and its precise rules).
///
/// Eight states — six `@Loadable` wrappers and two key paths of a `LoadableSupport` model — and five keys (four
/// `CacheKey<Int>("k", i)` and a `CacheKey<String>("k", 0, "label")` that shares their prefixes) go through a random
/// mix of cached `load`s and `refresh`es (staleTime the cache's, zero or large; loads silent or not), `cancel()`,
/// `reset()`, manual writes (wrappers), plain loads, `set`, `invalidate`, `invalidate(prefix:)`, `remove`,
/// `removeAll`, `advance(by:)` on a `TestClock`, and the success or failure of any fetch started so far — superseded
/// ones included, whose blocks ignore cancellation. A plain reference model (`CacheModel`) predicts every state, every
/// value, `count` and which fetches start (with which call's block); the runner compares after every operation.
///
/// Every event is explicit, so a seed replays exactly: a fetch's block registers in a `CacheFetchScript` and waits for
/// the test to resume it; the runner waits for the registrations the model predicts, for the block's return (its
/// outcome is written in that same main-actor turn), for the Task of every call whose wait ended, and for the cache's
/// collector to sleep again after the clock moved (a bound keeper entry keeps it sleeping).
///
/// A failure prints its seed: `PROCESSED_SEED=<seed> swift test --filter LoadCacheModelTests` replays it,
/// `PROCESSED_MODEL_TRACE=1` prints every operation, and `PROCESSED_MODEL_OPS=<n>` sets the operations per seed
/// (default 2,000: 10 seeds × 2,000 = 20,000 operations).
@Suite struct LoadCacheModelTests {
  static let seeds: [UInt64] = [
    0xCAC4_0001, 0xCAC4_0002, 0xCAC4_0003, 0xCAC4_0004, 0xCAC4_0005,
    0xCAC4_0006, 0xCAC4_0007, 0xCAC4_0008, 0xCAC4_0009, 0xCAC4_000A,
  ]
  static let defaultOperations = 2_000

  @Test(.timeLimit(.minutes(5)))
  @MainActor
  func randomCacheOperationsMatchTheReferenceModel() async {
    let configuration = MBConfiguration.fromEnvironment()
    let operations =
      configuration.operations == MBConfiguration.defaultOperations
      ? Self.defaultOperations : configuration.operations
    let seeds = configuration.chosenSeed.map { [$0] } ?? Self.seeds
    var total = 0
    var failures = 0
    for seed in seeds {
      let run = CacheModelRun(seed: seed, operations: operations, tracing: configuration.tracing)
      let outcome = await run.run()
      total += outcome.operations
      if outcome.failed { failures += 1 }
    }
    print("cache model-based: \(total) operations in \(seeds.count) runs, \(failures) failed")
    if configuration.chosenSeed == nil, operations == Self.defaultOperations {
      #expect(total >= 20_000 || failures > 0, "cache model-based: only \(total) operations")
    }
  }
}

// MARK: - Fetches

/// The fetches of a run: each block registers (its id, its key, the call that made it) and waits until the test
/// resumes it with a value or an error. It ignores cancellation, like network code that does not cooperate.
@MainActor
final class CacheFetchScript {
  struct Registration {
    let key: Int?
    let origin: Int
    var continuation: CheckedContinuation<Result<Int, CacheModelFailure>, Never>?
  }

  private(set) var registrations: [Registration] = []
  private var registrationWaiter: (count: Int, continuation: CheckedContinuation<Void, Never>)?
  private var returnWaiter: (id: Int, continuation: CheckedContinuation<Void, Never>)?
  private var timedOut = false

  /// A block for `key` (nil: a plain load) made by call `origin`.
  func block(key: Int?, origin: Int) -> @MainActor () async throws -> Int {
    { [self] in try await self.run(key: key, origin: origin) }
  }

  private func run(key: Int?, origin: Int) async throws -> Int {
    let id = registrations.count
    let result = await withCheckedContinuation { continuation in
      registrations.append(Registration(key: key, origin: origin, continuation: continuation))
      if let waiter = registrationWaiter, registrations.count >= waiter.count {
        registrationWaiter = nil
        waiter.continuation.resume()
      }
    }
    // The test goes on once this turn of the main actor is over: after the engine handled the outcome.
    if let waiter = returnWaiter, waiter.id == id {
      returnWaiter = nil
      waiter.continuation.resume()
    }
    return try result.get()
  }

  /// Waits until `count` blocks have registered; `false` if that did not happen within the safety limit.
  func untilRegistered(_ count: Int) async -> Bool {
    if registrations.count >= count { return true }
    let deadline = SafetyLimit.start(.seconds(10)) { [self] in
      guard let waiter = self.registrationWaiter else { return }
      self.registrationWaiter = nil
      waiter.continuation.resume()
    }
    await withCheckedContinuation { registrationWaiter = (count, $0) }
    deadline.cancel()
    return registrations.count >= count
  }

  /// Whether fetch `id` still waits for the test.
  func isPending(_ id: Int) -> Bool { registrations[id].continuation != nil }

  /// Resumes fetch `id` with `result` and waits until its block has returned; `false` on the safety limit.
  func resume(_ id: Int, with result: Result<Int, CacheModelFailure>) async -> Bool {
    guard let continuation = registrations[id].continuation else { return false }
    registrations[id].continuation = nil
    timedOut = false
    let deadline = SafetyLimit.start(.seconds(10)) { [self] in
      guard let waiter = self.returnWaiter else { return }
      self.returnWaiter = nil
      self.timedOut = true
      waiter.continuation.resume()
    }
    await withCheckedContinuation {
      returnWaiter = (id, $0)
      continuation.resume(returning: result)
    }
    deadline.cancel()
    return !timedOut
  }
}

// MARK: - Subjects

@MainActor
final class CacheModelScreen {
  @Loadable var number: LoadableState<Int>
}

@MainActor
final class CacheModelKeyPaths: LoadableSupport, ObservableModel {
  let observers = ObserverRegistry()
  var first: LoadableState<Int> = .absent
  var second: LoadableState<Int> = .absent
}

/// The writes to the states of a run, in order.
@MainActor
final class CacheModelLog {
  var writes: [(state: Int, written: LoadableState<Int>)] = []
}

/// The eight states: six wrappers, then two key paths of one model.
@MainActor
struct CacheModelStates {
  static let wrappers = 6
  static let count = 8
  let screens = (0..<wrappers).map { _ in CacheModelScreen() }
  let model = CacheModelKeyPaths()
  let recorders: [StateRecorder<LoadableState<Int>>]
  /// Every write to any of the states, in order: which state, and what.
  let log = CacheModelLog()

  init() {
    let model = self.model
    let log = self.log
    recorders = (0..<Self.count).map { _ in StateRecorder() }
    for (index, recorder) in recorders.enumerated() {
      let record: @MainActor (LoadableState<Int>) -> Void = { [weak recorder] state in
        log.writes.append((index, state))
        recorder?.record(state)
      }
      recorder.token =
        index < Self.wrappers
        ? screens[index].$number.observe(record)
        : model.observe(index == Self.wrappers ? \.first : \.second, record)
    }
  }

  private func keyPath(_ index: Int) -> ReferenceWritableKeyPath<CacheModelKeyPaths, LoadableState<Int>> {
    index == Self.wrappers ? \.first : \.second
  }

  func state(_ index: Int) -> LoadableState<Int> {
    index < Self.wrappers ? screens[index].number : model[keyPath: keyPath(index)]
  }

  func load(
    _ index: Int, key: CacheKey<Int>, in cache: LoadCache, silently: Bool, options: LoadOptions?,
    block: @escaping @MainActor () async throws -> Int
  ) -> Task<Void, Never> {
    if index < Self.wrappers {
      return screens[index].$number.load(key, in: cache, silently: silently, options: options, block: block)
    }
    return model.load(keyPath(index), key: key, in: cache, silently: silently, options: options, block: block)
  }

  func refresh(
    _ index: Int, key: CacheKey<Int>, in cache: LoadCache, options: LoadOptions?,
    block: @escaping @MainActor () async throws -> Int
  ) -> Task<Void, Never> {
    if index < Self.wrappers { return screens[index].$number.refresh(key, in: cache, options: options, block: block) }
    return model.refresh(keyPath(index), key: key, in: cache, options: options, block: block)
  }

  func plainLoad(_ index: Int, block: @escaping @MainActor () async throws -> Int) -> Task<Void, Never> {
    if index < Self.wrappers { return screens[index].$number.load(block: block) }
    return model.load(keyPath(index), block: block)
  }

  func cancel(_ index: Int) {
    if index < Self.wrappers { screens[index].$number.cancel() } else { model.cancel(keyPath(index)) }
  }

  func reset(_ index: Int) {
    if index < Self.wrappers { screens[index].$number.reset() } else { model.reset(keyPath(index)) }
  }

  /// A manual write through the wrapper's property (a key path's plain property has no hook to unbind it).
  func write(_ index: Int, _ state: LoadableState<Int>) {
    screens[index].number = state
  }
}

import ProcessedTesting
import Testing

@testable import Processed

/// An `async` cached call of a wrapper's state waits for its entry's fetch in the caller's own task (no waiting task);
/// a key-path state's call waits in a task of its own. Both must behave alike: every scenario runs on both and their
/// state histories, activity and returns are compared with what the spec asks.
@MainActor
@Suite struct LoadCacheAsyncWaitTests {
  @MainActor
  final class Screen {
    @Loadable var number: LoadableState<Int>
  }

  @MainActor
  final class KeyPathScreen: LoadableSupport, ObservableModel {
    let observers = ObserverRegistry()
    var number: LoadableState<Int> = .absent
  }

  /// One state of either kind, driven the same way.
  @MainActor
  struct Subject {
    let load: (CacheKey<Int>, LoadCache, @escaping @MainActor () async throws -> Int) async -> Void
    let reset: () -> Void
    let activity: () -> LoadActivity
    let recorder: StateRecorder<LoadableState<Int>>
    let keep: AnyObject

    static func make(wrapper: Bool) -> Subject {
      if wrapper {
        let screen = Screen()
        return Subject(
          load: { key, cache, block in await screen.$number.load(key, in: cache, block: block) },
          reset: { screen.$number.reset() }, activity: { screen.$number.activity },
          recorder: StateRecorder(screen.$number), keep: screen)
      }
      let screen = KeyPathScreen()
      return Subject(
        load: { key, cache, block in await screen.load(\.number, key: key, in: cache, block: block) },
        reset: { screen.reset(\.number) }, activity: { screen.loadables.number.activity },
        recorder: StateRecorder(screen, \.number), keep: screen)
    }
  }

  @Test(arguments: [true, false])
  func aMissReturnsAfterTheOutcomeIsWrittenAndTheLoadHasEnded(wrapper: Bool) async {
    let subject = Subject.make(wrapper: wrapper)
    let cache = LoadCache()
    await subject.load(CacheKey("n", 1), cache) { 7 }
    #expect(subject.recorder.values == [.loading, .loaded(7)])
    #expect(subject.activity().phase == .idle)
    #expect(cache.value(for: CacheKey<Int>("n", 1)) == 7)
  }

  @Test(arguments: [true, false])
  func aCancelledCallerReturnsWithoutWaitingForTheFetchAndItsLoadEnds(wrapper: Bool) async throws {
    let subject = Subject.make(wrapper: wrapper)
    let cache = LoadCache()
    let gate = Gate()
    let caller = Task {
      await subject.load(CacheKey("n", 1), cache) {
        await gate.wait()  // ignores cancellation
        return 3
      }
    }
    await gate.untilWaiting(1)
    #expect(subject.activity().isActive)
    caller.cancel()
    await caller.value  // the block still waits at the gate
    #expect(gate.waiting == 1)
    #expect(subject.activity().phase == .idle)
    #expect(subject.recorder.values == [.loading])
    // The state stays bound (only its load was cancelled): the fetch's outcome still reaches it.
    gate.open()
    try await subject.recorder.wait(forCount: 2)
    #expect(subject.recorder.values == [.loading, .loaded(3)])
    withExtendedLifetime(subject.keep) {}
  }

  @Test(arguments: [true, false])
  func aCallerWhoseStateIsResetReturnsAndNothingIsWrittenAfter(wrapper: Bool) async {
    let subject = Subject.make(wrapper: wrapper)
    let cache = LoadCache()
    let gate = Gate()
    let caller = Task {
      await subject.load(CacheKey("n", 1), cache) {
        await gate.wait()
        return 3
      }
    }
    await gate.untilWaiting(1)
    subject.reset()  // unbinds: the fetch, which no state waits for any more, is cancelled
    await caller.value
    gate.open()
    // A later miss of the same key runs its own block; nothing of the first fetch was written.
    await subject.load(CacheKey("n", 1), cache) { 4 }
    #expect(subject.recorder.values == [.loading, .absent, .loading, .loaded(4)])
    withExtendedLifetime(subject.keep) {}
  }

  @Test(arguments: [true, false])
  func twoCallersOfOneKeyRunTheBlockOnceAndBothSeeTheOutcomeBeforeEitherReturns(wrapper: Bool) async {
    let (first, second) = (Subject.make(wrapper: wrapper), Subject.make(wrapper: wrapper))
    let cache = LoadCache()
    let gate = Gate()
    var runs = 0
    var seenAtReturn: [LoadableState<Int>] = []
    let a = Task {
      await first.load(CacheKey("n", 1), cache) {
        runs += 1
        await gate.wait()
        return 5
      }
      seenAtReturn.append(second.recorder.values.last ?? .absent)
    }
    await gate.untilWaiting(1)
    let b = Task {
      await second.load(CacheKey("n", 1), cache) {
        runs += 1
        return 6
      }
      seenAtReturn.append(first.recorder.values.last ?? .absent)
    }
    gate.open()
    await a.value
    await b.value
    #expect(runs == 1)
    #expect(first.recorder.values == [.loading, .loaded(5)])
    #expect(second.recorder.values == [.loading, .loaded(5)])
    #expect(seenAtReturn == [.loaded(5), .loaded(5)])
    withExtendedLifetime((first.keep, second.keep)) {}
  }
}

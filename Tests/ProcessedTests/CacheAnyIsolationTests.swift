import Dispatch
import Processed
import ProcessedTesting
import Testing

@testable import Processed

/// An actor that mutates a cache's key: its operation touches the actor's state, as a service's would.
actor LikeService {
  let cache: LoadCache
  var posted: [Int] = []

  init(_ cache: LoadCache) { self.cache = cache }

  func like(_ id: Int, in key: CacheKey<[Int]>, failing: Bool = false, after gate: ActorGate? = nil) async throws {
    try await cache.mutate(key, optimistic: { $0.append(id) }) {
      await gate?.wait()
      if failing { throw LikeFailure() }
      posted.append(id)
    }
  }

  struct LikeFailure: Error {}
}

/// Every `LoadCache` method from any isolation: writes return at once, awaited reads see every call made before them, and
/// the calls take effect in one order with the main actor's (linearizable per cache).
@Suite struct CacheAnyIsolationTests {
  /// Only a hang detector: these tasks hop to the main actor once per read, and with the whole suite running under a
  /// sanitizer the main actor's queue is long (a 30-second limit was reached in CI's thread-sanitizer run).
  static let hangLimit = Duration.seconds(300)

  /// Runs `work` off the main actor while the main actor is busy (as a screen's work keeps it), then lets it run the
  /// calls `work` queued.
  func whileTheMainActorIsBusy(_ work: @escaping @Sendable () -> Void) async throws {
    let (entered, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
    let busy = Task { @MainActor in
      entered.signal()
      release.wait()
    }
    try await Task.detached {
      entered.wait()
      work()
      release.signal()
    }.value(timeLimit: Self.hangLimit)
    try await busy.value(timeLimit: Self.hangLimit)
  }

  /// A `set` made off the main actor returns at once and runs there later; the value is as old as the call (found from
  /// outside: it was stamped when the main actor ran it, so a busy main actor kept it fresh past its `staleTime`).
  @Test func aSetMadeOffTheMainActorIsWrittenAtTheTimeOfTheCall() async throws {
    let clock = TestClock()
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    let key = CacheKey<Int>("k")
    try await whileTheMainActorIsBusy {
      cache.set(1, for: key)  // queued for the main actor, which is busy
      clock.advance(by: .seconds(10))
    }
    let (writtenAt, fresh) = await MainActor.run {
      let entry = cache.store.entry(for: key)
      return (entry?.writtenAt, entry?.isFresh(staleTime: .seconds(10)))
    }
    #expect(writtenAt == .zero)  // the call's time, not the main actor's turn (10 s)
    #expect(fresh == false)  // stale at exactly `staleTime` after the call
    #expect(await cache.value(for: key) == 1)
  }

  /// Only the queued call's own value takes the call's time: a main-actor `set` an observer makes while the queued
  /// `set` delivers is written at the time it runs.
  @Test func aWriteAnObserverMakesDuringAQueuedSetIsWrittenAtItsOwnTime() async throws {
    let clock = TestClock()
    let cache = LoadCache(staleTime: .seconds(10), clock: clock)
    let (shown, echoed) = (CacheKey<Int>("shown"), CacheKey<Int>("echoed"))
    let screen = CacheScreen()
    let token = await MainActor.run {
      screen.$number.observe { state in
        if state == .loaded(1) { cache.set(100, for: echoed) }
      }
    }
    try await Task { @MainActor in
      await screen.$number.load(shown, in: cache) { 0 }
    }.value(timeLimit: Self.hangLimit)
    try await whileTheMainActorIsBusy {
      cache.set(1, for: shown)  // queued at 0 s
      clock.advance(by: .seconds(4))
    }
    let times = await MainActor.run {
      (cache.store.entry(for: shown)?.writtenAt, cache.store.entry(for: echoed)?.writtenAt)
    }
    #expect(times.0 == .zero)  // the queued call's time
    #expect(times.1 == .seconds(4))  // the observer's own call ran at 4 s
    withExtendedLifetime(token) {}
  }

  @Test func aTaskOffTheMainActorReadsItsOwnWrites() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("k")
    try await Task.detached {
      #expect(!MainQueue.isCurrent)
      cache.set(1, for: key)
      #expect(await cache.value(for: key) == 1)
      #expect(await cache.count == 1)
      cache.set(2, for: key)
      cache.invalidate(key)
      #expect(await cache.value(for: key) == 2)  // invalidating keeps the value
      cache.remove(key)
      #expect(await cache.value(for: key) == nil)
      #expect(await cache.count == 0)
      cache.set(3, for: key)
      cache.set(4, for: CacheKey<Int>("other"))
      cache.invalidate(prefix: "k")
      cache.invalidateAll()
      #expect(await cache.count == 2)
      cache.removeAll()
      #expect(await cache.count == 0)
    }.value(timeLimit: Self.hangLimit)
  }

  @Test func aWriteOffTheMainActorIsSeenByTheMainActorsNextCall() async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("k")
    for value in 1...50 {
      try await Task.detached { cache.set(value, for: key) }.value(timeLimit: Self.hangLimit)
      // The main actor may run its call before the queued write's own task: it runs the queued calls first.
      let seen = await MainActor.run { cache.value(for: key) }
      #expect(seen == value)
    }
  }

  @Test func aBoundStateIsWrittenOnTheMainActorByAWriteFromElsewhere() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<Int>("k")
    let (screen, recorder) = await MainActor.run {
      let screen = CacheScreen()
      let recorder = StateRecorder(screen.$number)
      return (screen, recorder)
    }
    await MainActor.run { _ = screen.$number.load(key, in: cache) { 1 } }
    try await Task.detached { cache.set(2, for: key) }.value(timeLimit: Self.hangLimit)
    await MainActor.run { _ = cache.count }  // runs the queued set
    #expect(await MainActor.run { recorder.values } == [.loading, .loaded(1), .loaded(2)])
  }

  /// A task off the main actor writes (queued for the main actor) and then asks `value(for:fetch:)`: the answer is
  /// what it wrote, never the value the cache published before the write ran. Each task's own keys, a random model.
  @Test func valueForSeesTheCallersOwnQueuedWrites() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    // Every key read once on the main actor first: its entries are published, so a stale row could be read.
    for task in 0..<4 {
      for slot in 0..<3 { _ = try await cache.value(for: CacheKey<Int>("v", task, slot)) { -1 } }
    }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for task in 0..<4 {
        group.addTask {
          var model = [Int: Int](uniqueKeysWithValues: (0..<3).map { ($0, -1) })
          var random = MBRandom(seed: UInt64(task) + 11)
          for step in 0..<300 {
            let slot = random.below(3)
            let key = CacheKey<Int>("v", task, slot)
            let answer = 10_000 + step
            switch random.below(6) {
            case 0..<3:
              cache.set(step, for: key)
              model[slot] = step
            case 3:
              cache.remove(key)
              model[slot] = nil
            case 4:
              // Stale: the value is returned, and the background refresh writes the same value again.
              cache.invalidate(key)
            default:
              break
            }
            let expected = model[slot] ?? answer
            let known = model[slot]
            let read = try await cache.value(for: key) { known ?? answer }
            #expect(read == expected, "task \(task) step \(step)")
            model[slot] = expected
          }
        }
      }
      try await group.waitForAll()
    }
  }

  @Test func manyTasksCallingEveryMethodEndAsIfTheCallsRanOneAtATime() async {
    let cache = LoadCache(staleTime: .seconds(3_600))
    // Each task owns its keys: after each write it must read what it wrote, and its last writes are what stays.
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<8 {
        group.addTask {
          var model: [Int: Int] = [:]
          var random = MBRandom(seed: UInt64(task) + 1)
          for step in 0..<300 {
            let slot = random.below(4)
            let key = CacheKey<Int>("t", task, slot)
            switch random.below(10) {
            case 0..<5:
              cache.set(step, for: key)
              model[slot] = step
            case 5:
              cache.remove(key)
              model[slot] = nil
            case 6:
              cache.invalidate(key)
            case 7:
              cache.invalidate(prefix: "t", task, slot)
            default:
              break
            }
            #expect(await cache.value(for: key) == model[slot])
          }
          for slot in 0..<4 {
            #expect(await cache.value(for: CacheKey<Int>("t", task, slot)) == model[slot])
          }
        }
      }
    }
    let count = await MainActor.run { cache.count }
    #expect(count <= 32)
    #expect(await cache.count == count)
  }

  @Test func anActorMutatesAKeyItsOperationRunningOnTheActor() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<[Int]>("likes")
    cache.set([1], for: key)
    let service = LikeService(cache)
    let gate = ActorGate()
    let like = Task { try await service.like(2, in: key, after: gate) }
    await gate.untilWaiting(1)
    #expect(await cache.value(for: key) == [1, 2])  // shown at once
    gate.open()
    try await like.value(timeLimit: Self.hangLimit)
    #expect(await service.posted == [2])
    #expect(await cache.value(for: key) == [1, 2])
  }

  @Test func aFailedMutationFromAnActorIsUndone() async throws {
    let cache = LoadCache(staleTime: .seconds(3_600))
    let key = CacheKey<[Int]>("likes")
    cache.set([1], for: key)
    let service = LikeService(cache)
    await #expect(throws: LikeService.LikeFailure.self) { try await service.like(2, in: key, failing: true) }
    #expect(await cache.value(for: key) == [1])
    #expect(await service.posted.isEmpty)
  }
}

import ProcessedTesting
import Testing

@testable import Processed

private struct Flaky: Error {}

private extension CacheKey where Value == Int {
  static func number(_ id: Int) -> Self { CacheKey("number", id) }
}

/// Counts a block's runs.
@MainActor
private final class Runs {
  var count = 0
}

/// A cached call given no options takes its state's declared ones for the entry's fetch (retry, limiter, clock); the
/// state's own load, which only waits for the fetch, runs plain — it neither retries nor takes a permit.
@MainActor
@Suite struct LoadCacheDeclaredOptionsTests {
  let clock = TestClock()

  @Test func aCallWithoutOptionsFetchesWithTheDeclarationsRetry() async throws {
    let cache = LoadCache(clock: clock)
    @Loadable(options: LoadOptions(retry: .constant(.seconds(1), maxRetries: 1), clock: clock))
    var number: LoadableState<Int>
    let recorder = StateRecorder($number)
    let runs = Runs()
    let task: Task<Void, Never> = $number.load(.number(1), in: cache) {
      runs.count += 1
      if runs.count == 1 { throw Flaky() }
      return 5
    }
    // The first attempt failed and the fetch sleeps on the declared clock before its retry; nothing is written.
    try await clock.waitForSleepers(1)
    #expect(recorder.values == [.loading])
    clock.advance(by: .seconds(1))
    await task.value
    #expect(recorder.values == [.loading, .loaded(5)])
    #expect(runs.count == 2)
    #expect(cache.value(for: .number(1)) == 5)
  }

  @Test func theStatesWaitingLoadsTakeNoPermitOfTheDeclaredLimiter() async throws {
    let cache = LoadCache(clock: clock)
    let limiter = LoadLimiter(maxConcurrent: 1)
    @Loadable(options: LoadOptions(limiter: limiter, clock: clock)) var first: LoadableState<Int>
    @Loadable(options: LoadOptions(limiter: limiter, clock: clock)) var second: LoadableState<Int>
    let firstStates = StateRecorder($first)
    let secondStates = StateRecorder($second)
    let runs = Runs()
    let gates = [Gate(), Gate()]
    // One permit: the entry's fetch holds it; if a state's waiting load asked for one too, it would wait behind the
    // fetch it waits for, and show the limiter's `.waiting` phase.
    let firstTask: Task<Void, Never> = $first.load(.number(1), in: cache) {
      runs.count += 1
      await gates[runs.count - 1].wait()
      return 9 + runs.count
    }
    let secondTask: Task<Void, Never> = $second.load(.number(1), in: cache) {
      Issue.record("joined: the block does not run")
      return 0
    }
    await gates[0].untilWaiting(1)
    #expect(limiter.running == 1 && limiter.waiting == 0)
    #expect($first.activity.phase != .waiting && $second.activity.phase != .waiting)
    gates[0].open()
    await firstTask.value
    await secondTask.value
    #expect(first == .loaded(10) && second == .loaded(10))
    // An invalidation fetches again with the last fetch's block and options; the entry starts each bound state's
    // waiting load itself.
    cache.invalidate(.number(1))
    await gates[1].untilWaiting(1)
    #expect(limiter.running == 1 && limiter.waiting == 0)
    #expect($first.activity.phase != .waiting && $second.activity.phase != .waiting)
    gates[1].open()
    try await firstStates.wait(for: .loaded(11))
    try await secondStates.wait(for: .loaded(11))
    #expect(runs.count == 2)
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  @Test func aCallsOwnOptionsReplaceTheDeclarations() async throws {
    let cache = LoadCache(clock: clock)
    @Loadable(options: LoadOptions(retry: .constant(.seconds(1), maxRetries: 3), clock: clock))
    var number: LoadableState<Int>
    let runs = Runs()
    // The call's options have no retry: one failing attempt, its error written.
    await $number.load(.number(1), in: cache, options: LoadOptions(clock: clock)) {
      runs.count += 1
      throw Flaky()
    }
    #expect(runs.count == 1)
    #expect(number.error is Flaky)
  }
}

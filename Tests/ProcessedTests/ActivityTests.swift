import ProcessedTesting
import Testing

@testable import Processed

/// `LoadActivity`: one change per phase change, through every policy, on a TestClock.
@MainActor
@Suite struct ActivityTests {
  struct Failure: Error, Equatable { let attempt: Int }

  /// Records every activity of a controller.
  final class ActivityLog {
    var values: [LoadActivity] = []
    var token: ObservationToken?
    var phases: [LoadActivity.Phase] { values.map(\.phase) }
  }

  func log(_ controller: LoadableController<Int>) -> ActivityLog {
    let log = ActivityLog()
    log.token = controller.observeActivity { [unowned log] in log.values.append($0) }
    return log
  }

  @Test func aPlainLoadRunsItsFirstAttemptThenGoesIdle() async {
    let state = Loadable<Int>()
    #expect(state.projectedValue.activity == LoadActivity(phase: .idle))
    let activity = log(state.projectedValue)
    let gate = Gate()
    let task: Task<Void, Never> = state.projectedValue.load {
      await gate.wait()
      return 1
    }
    #expect(state.projectedValue.activity.phase == .running(attempt: 1))
    #expect(state.projectedValue.activity.isActive)
    gate.open()
    await task.value
    #expect(activity.phases == [.running(attempt: 1), .idle])
    #expect(!state.projectedValue.activity.isActive)
  }

  @Test func everyPhaseIsReportedOnceInOrder() async throws {
    let clock = TestClock()
    let limiter = LoadLimiter(maxConcurrent: 1)
    let state = Loadable<Int>()
    let activity = log(state.projectedValue)
    var attempts = 0
    let options = LoadOptions(
      retry: .constant(.seconds(1), maxRetries: 1), debounce: .trailing(.seconds(1)), limiter: limiter, clock: clock)
    let task: Task<Void, Never> = state.projectedValue.load(options: options) {
      attempts += 1
      if attempts == 1 { throw Failure(attempt: 1) }
      return 2
    }
    try await clock.waitForSleepers(1)  // the debounce
    clock.advance(by: .seconds(1))
    try await clock.waitForSleepers(1)  // the retry delay
    #expect(state.projectedValue.activity.lastError as? Failure == Failure(attempt: 1))
    clock.advance(by: .seconds(1))
    await task.value
    #expect(
      activity.phases == [
        .debouncing, .waiting, .running(attempt: 1), .retrying(attempt: 2), .waiting, .running(attempt: 2), .idle,
      ])
    #expect(activity.values[3].lastError as? Failure == Failure(attempt: 1))
    #expect(state.projectedValue.activity == LoadActivity(phase: .idle))  // a success clears the error
    #expect(state.wrappedValue == .loaded(2))
  }

  @Test func whenRetriesRunOutTheLastAttemptsErrorIsTheLastError() async throws {
    let clock = TestClock()
    let state = Loadable<Int>()
    let activity = log(state.projectedValue)
    var attempts = 0
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 1), clock: clock)
    let task: Task<Void, Never> = state.projectedValue.load(options: options) {
      attempts += 1
      throw Failure(attempt: attempts)
    }
    try await clock.waitForSleepers(1)
    #expect(state.projectedValue.activity.lastError as? Failure == Failure(attempt: 1))
    clock.advance(by: .seconds(1))
    await task.value
    #expect(state.wrappedValue == .error(Failure(attempt: 2)))
    #expect(state.projectedValue.activity.lastError as? Failure == Failure(attempt: 2))
    #expect(
      activity.values == [
        LoadActivity(phase: .running(attempt: 1)),
        LoadActivity(phase: .retrying(attempt: 2), lastError: Failure(attempt: 1)),
        LoadActivity(phase: .running(attempt: 2), lastError: Failure(attempt: 1)),
        LoadActivity(phase: .idle, lastError: Failure(attempt: 2)),
      ])
  }

  @Test func aSupersedingLoadChangesNothingWhenItsActivityIsTheSame() async {
    let state = Loadable<Int>()
    let activity = log(state.projectedValue)
    let gate = Gate()
    let first: Task<Void, Never> = state.projectedValue.load {
      await gate.wait()
      return 1
    }
    let second: Task<Void, Never> = state.projectedValue.load {
      await gate.wait()
      return 2
    }
    gate.open()
    await first.value
    await second.value
    #expect(activity.phases == [.running(attempt: 1), .idle])  // no duplicate for the second .running(1)
  }

  @Test func cancelAndResetEndTheActivityAndResetClearsTheError() async throws {
    let clock = TestClock()
    let state = Loadable<Int>()
    let activity = log(state.projectedValue)
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 3), clock: clock)
    let task: Task<Void, Never> = state.projectedValue.load(options: options) { throw Failure(attempt: 0) }
    try await clock.waitForSleepers(1)
    state.projectedValue.cancel()
    await task.value
    #expect(state.projectedValue.activity.phase == .idle)
    #expect(state.projectedValue.activity.lastError != nil)  // kept after a cancel
    state.projectedValue.reset()
    #expect(state.projectedValue.activity == LoadActivity(phase: .idle))
    #expect(
      activity.values == [
        LoadActivity(phase: .running(attempt: 1)),
        LoadActivity(phase: .retrying(attempt: 2), lastError: Failure(attempt: 0)),
        LoadActivity(phase: .idle, lastError: Failure(attempt: 0)),
        LoadActivity(phase: .idle),
      ])
  }

  @Test func noActivityIsDeliveredAfterCancelReturnsAndProcessesHaveActivityToo() async {
    @Processed.Process var save
    var seen: [LoadActivity.Phase] = []
    let token = $save.observeActivity { seen.append($0.phase) }
    await $save.run {}
    token.cancel()
    await $save.run {}
    #expect(seen == [.running(attempt: 1), .idle])
    #expect(save.hasFinished)
  }

  @Test func anActivityTokenCancelledOnAnotherThreadIsNeverCalledAfterCancelReturns() async {
    let state = Loadable<Int>()
    let cancelled = LockedBox(false)
    var lateCalls = 0
    for _ in 0..<200 {
      cancelled.withLock { $0 = false }
      let token = state.projectedValue.observeActivity { _ in
        if cancelled.withLock({ $0 }) { lateCalls += 1 }
      }
      let canceller = Task.detached {
        token.cancel()
        cancelled.withLock { $0 = true }
      }
      for value in 0..<5 {
        let task: Task<Void, Never> = state.projectedValue.load { value }
        await task.value
      }
      await canceller.value
    }
    #expect(lateCalls == 0)
  }

  @Test func anObserverStartingALoadFromAnActivityChangeSeesTheNewLoad() async {
    let state = Loadable<Int>()
    var phases: [LoadActivity.Phase] = []
    var restarted = false
    let token = state.projectedValue.observeActivity { activity in
      phases.append(activity.phase)
      if activity.phase == .idle, !restarted {
        restarted = true
        let _: Task<Void, Never> = state.projectedValue.load { 2 }
      }
    }
    await state.projectedValue.load { 1 }
    await until(.changes(of: state.projectedValue)) { state.wrappedValue == .loaded(2) }
    #expect(phases == [.running(attempt: 1), .idle, .running(attempt: 1), .idle])
    token.cancel()
  }
}

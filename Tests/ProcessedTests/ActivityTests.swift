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

/// `LoadProgress`: clamped, reported by the running load only, cleared when it ends.
@MainActor
@Suite struct ProgressTests {
  @Test func fractionsAreClampedAndNaNIsIndeterminate() {
    #expect(LoadProgress(fraction: -0.5).fraction == 0)
    #expect(LoadProgress(fraction: 1.5).fraction == 1)
    #expect(LoadProgress(fraction: .infinity).fraction == 1)
    #expect(LoadProgress(fraction: -.infinity).fraction == 0)
    #expect(LoadProgress(fraction: .nan).fraction == nil)
    #expect(LoadProgress(fraction: nil, message: "…").fraction == nil)
    var progress = LoadProgress(fraction: 0.5)
    progress.fraction = 7
    #expect(progress.fraction == 1)
  }

  @Test func theRunningLoadsReportsAreItsProgressAndEndWithIt() async {
    let state = Loadable<Int>()
    var progress: [LoadProgress?] = []
    let token = state.projectedValue.observeActivity { progress.append($0.progress) }
    await state.projectedValue.load {
      LoadProgress.report(fraction: 0.25, message: "a quarter")
      LoadProgress.report(fraction: 0.25, message: "a quarter")  // unchanged: not delivered again
      await Task.yield()
      LoadProgress.report(fraction: 2)
      return 1
    }
    #expect(progress == [nil, LoadProgress(fraction: 0.25, message: "a quarter"), LoadProgress(fraction: 1), nil])
    #expect(state.projectedValue.activity.progress == nil)
    token.cancel()
  }

  @Test func reportsOfAStaleLoadOrOutsideAnyLoadAreDropped() async {
    let state = Loadable<Int>()
    LoadProgress.report(fraction: 0.5)  // outside any load: nothing
    #expect(state.projectedValue.activity.progress == nil)
    let gate = Gate()
    let stale: Task<Void, Never> = state.projectedValue.load {
      await gate.wait()
      LoadProgress.report(fraction: 0.9, message: "stale")
      return 1
    }
    let currentGate = Gate()
    let current: Task<Void, Never> = state.projectedValue.load {
      LoadProgress.report(fraction: 0.1)
      await currentGate.wait()
      return 2
    }
    await until(.activity(of: state.projectedValue)) { state.projectedValue.activity.progress?.fraction == 0.1 }
    gate.open()
    await stale.value
    #expect(state.projectedValue.activity.progress?.fraction == 0.1)
    currentGate.open()
    await current.value
    #expect(state.projectedValue.activity.progress == nil)
  }

  @Test func aTaskStartedInsideTheBlockThatOutlivesTheLoadReportsNothing() async {
    let state = Loadable<Int>()
    let gate = Gate()
    var late: Task<Void, Never>?
    var detached: Task<Void, Never>?
    await state.projectedValue.load {
      late = Task { @MainActor in
        await gate.wait()
        LoadProgress.report(fraction: 0.5)
      }
      detached = Task.detached { @MainActor in
        LoadProgress.report(fraction: 0.7)  // no context: nothing
      }
      return 1
    }
    await detached?.value
    gate.open()
    await late?.value
    await state.projectedValue.load { yield in
      yield(.loaded(2))
    }
    #expect(state.projectedValue.activity.progress == nil)
  }

  @Test func processesReportProgressToo() async {
    @Processed.Process var upload
    var fractions: [Double?] = []
    let token = $upload.observeActivity { fractions.append($0.progress?.fraction) }
    await $upload.run {
      for chunk in 1...2 {
        await Task.yield()
        LoadProgress.report(fraction: Double(chunk) / 2, message: "chunk \(chunk)")
      }
    }
    #expect(fractions == [nil, 0.5, 1, nil])
    token.cancel()
  }
}

/// `lastValue` and `refresh`.
@MainActor
@Suite struct RefreshTests {
  struct Failure: Error, Equatable {}

  @Test func lastValueIsKeptThroughLoadingAndErrorAndClearedByAbsent() async {
    let state = Loadable<Int>()
    #expect(state.projectedValue.lastValue == nil)
    await state.projectedValue.load { 1 }
    #expect(state.projectedValue.lastValue == 1)
    let gate = Gate()
    let task: Task<Void, Never> = state.projectedValue.load {
      await gate.wait()
      throw Failure()
    }
    #expect(state.wrappedValue == .loading)
    #expect(state.projectedValue.lastValue == 1)
    gate.open()
    await task.value
    #expect(state.wrappedValue == .error(Failure()))
    #expect(state.projectedValue.lastValue == 1)
    await state.projectedValue.load { 2 }
    #expect(state.projectedValue.lastValue == 2)
    state.projectedValue.reset()
    #expect(state.projectedValue.lastValue == nil)
    state.wrappedValue = .loading
    #expect(state.projectedValue.lastValue == nil)
  }

  @Test func aRefreshKeepsTheValueOnScreenAndAFailureGoesToTheActivity() async {
    let state = Loadable<Int>(wrappedValue: .loaded(1))
    let history = StateRecorder(state.projectedValue)
    await state.projectedValue.refresh { throw Failure() }
    #expect(history.values.isEmpty)  // no .loading, no .error
    #expect(state.projectedValue.activity.lastError as? Failure == Failure())
    await state.projectedValue.refresh { 2 }
    #expect(history.values == [.loaded(2)])
    #expect(state.projectedValue.activity.lastError == nil)  // a success clears it
  }

  @Test(arguments: [LoadableState<Int>.absent, .loading, .error(Failure())])
  func aRefreshFromAnyOtherStateIsALoad(_ initial: LoadableState<Int>) async {
    let state = Loadable<Int>(wrappedValue: initial)
    let history = StateRecorder(state.projectedValue)
    await state.projectedValue.refresh { throw Failure() }
    let expected: [LoadableState<Int>] = initial == .loading ? [.error(Failure())] : [.loading, .error(Failure())]
    #expect(history.values == expected)
    #expect(state.projectedValue.activity.lastError == nil)
  }

  @Test func aRefreshIsTheCurrentLoadLikeAnyOther() async {
    let state = Loadable<Int>(wrappedValue: .loaded(1))
    let gate = Gate()
    let refresh: Task<Void, Never> = state.projectedValue.refresh {
      await gate.wait()
      throw Failure()
    }
    #expect(state.projectedValue.activity.phase == .running(attempt: 1))
    state.projectedValue.cancel()
    gate.open()
    await refresh.value
    #expect(state.wrappedValue == .loaded(1))
    #expect(state.projectedValue.activity.lastError == nil)  // a cancelled refresh keeps nothing
    let control: Task<Void, Never> = state.projectedValue.refresh { throw ResetLoadable() }
    await control.value
    #expect(state.wrappedValue == .absent)  // control errors act as usual
  }

  @Test func aKeyPathRefreshKeepsTheValueToo() async {
    let model = PolicyModel()
    model.keyPathResults = .loaded(1)
    let history = StateRecorder(model, \.keyPathResults)
    await model.refresh(\.keyPathResults) { throw Failure() }
    #expect(history.values.isEmpty)
    #expect(model.keyPathResults == .loaded(1))
    let refresh: Task<Void, Never> = model.refresh(\.keyPathResults) { 2 }
    await refresh.value
    #expect(history.values == [.loaded(2)])
    // A wrapper reached by key path: the same state.
    model.results = .loaded(3)
    await model.refresh(\.results) { throw Failure() }
    #expect(model.results == .loaded(3))
    #expect(model.$results.activity.lastError as? Failure == Failure())
  }

  @Test func aRetryingRefreshKeepsTheLastErrorAndTheValue() async throws {
    let clock = TestClock()
    let state = Loadable<Int>(wrappedValue: .loaded(1))
    var attempts = 0
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 1), clock: clock)
    let task: Task<Void, Never> = state.projectedValue.refresh(options: options) {
      attempts += 1
      throw Failure()
    }
    try await clock.waitForSleepers(1)
    #expect(state.projectedValue.activity.phase == .retrying(attempt: 2))
    clock.advance(by: .seconds(1))
    await task.value
    #expect(attempts == 2)
    #expect(state.wrappedValue == .loaded(1))
    #expect(state.projectedValue.activity == LoadActivity(phase: .idle, lastError: Failure()))
  }
}

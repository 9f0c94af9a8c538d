import ProcessedTesting
import Testing

@testable import Processed

/// `StateRecorder`'s waits for a state, a history, an activity phase and a history of phases, and what their failures
/// say. The waits that must fail use a short real-time limit: the only real time these tests spend.
@MainActor
@Suite struct StateRecorderWaitTests {
  struct Unavailable: Error, Equatable {}

  @Test func waitingForAStateReturnsOnceItIsRecorded() async throws {
    let clock = TestClock()
    let state = Loadable<Int>()
    let recorder = StateRecorder(state.projectedValue)
    let task: Task<Void, Never> = state.projectedValue.load(
      options: LoadOptions(debounce: .trailing(.seconds(1)), clock: clock)
    ) { 1 }
    try await clock.waitForSleepers(1)  // the debounce
    #expect(recorder.values.isEmpty)
    clock.advance(by: .seconds(1))
    try await recorder.wait(for: .loaded(1))
    #expect(recorder.values == [.loading, .loaded(1)])
    try await recorder.wait(for: .loading)  // already recorded: at once
    await task.value
  }

  @Test func aHistoryThatGoesAnotherWayFailsAtOnceWithBothHistories() async throws {
    let state = Loadable<Int>()
    let recorder = StateRecorder(state.projectedValue)
    await state.projectedValue.load { throw Unavailable() }
    let error = await #expect(throws: StateRecorder<LoadableState<Int>>.UnexpectedHistory.self) {
      try await recorder.wait(forHistory: [.loading, .loaded(1)])
    }
    #expect(
      error?.description
        == "expected 2 changes: [LoadableState.loading, LoadableState.loaded(1)]; recorded 2 changes: "
        + "[LoadableState.loading, LoadableState.error(Unavailable())]")
    try await recorder.wait(forHistory: [.loading, .error(Unavailable())])
  }

  @Test func aStateWaitThatTimesOutListsWhatWasRecorded() async {
    let state = Loadable<Int>()
    let recorder = StateRecorder(state.projectedValue)
    state.wrappedValue = .loading
    let error = await #expect(throws: StateRecorder<LoadableState<Int>>.TimeLimitExceeded.self) {
      try await recorder.wait(for: .loaded(1), timeLimit: .milliseconds(20))
    }
    #expect(
      error?.description == "waited 0.02s for LoadableState.loaded(1); recorded 1 change: [LoadableState.loading]")
    let count = await #expect(throws: StateRecorder<LoadableState<Int>>.TimeLimitExceeded.self) {
      try await recorder.wait(forCount: 2, timeLimit: .milliseconds(20))
    }
    #expect(count?.description == "waited 0.02s for 2 changes; recorded 1 change: [LoadableState.loading]")
  }

  /// Timeout plus retry, observed through the activity: the wait for `.retrying(attempt: 2)` returns while the load
  /// waits to retry, so the test moves time only once the retry delay has started.
  @Test func waitingForARetryPhase() async throws {
    let clock = TestClock()
    let state = Loadable<Int>()
    let activity = StateRecorder(activityOf: state.projectedValue)
    var attempts = 0
    let options = LoadOptions(retry: .constant(.seconds(2), maxRetries: 1), timeout: .seconds(1), clock: clock)
    let task: Task<Void, Never> = state.projectedValue.load(options: options) {
      attempts += 1
      if attempts == 1 { try await clock.sleep(for: .seconds(60)) }
      return attempts
    }
    try await clock.waitForSleepers(2)  // the block and the timeout
    clock.advance(by: .seconds(1))
    try await activity.wait(forPhase: .retrying(attempt: 2))
    try await clock.waitForSleepers(1)  // the retry delay
    #expect(activity.values.last?.lastError as? TimeoutError == TimeoutError())
    clock.advance(by: .seconds(2))
    try await activity.wait(forPhases: [.running(attempt: 1), .retrying(attempt: 2), .running(attempt: 2), .idle])
    await task.value
    #expect(state.wrappedValue == .loaded(2))
  }

  /// Debounce plus limiter: `.debouncing`, then `.waiting` for the permit another load holds, then running.
  @Test func waitingForTheDebounceAndTheQueue() async throws {
    let clock = TestClock()
    let limiter = LoadLimiter(maxConcurrent: 1)
    let holder = Loadable<Int>()
    let state = Loadable<Int>()
    let activity = StateRecorder(activityOf: state.projectedValue)
    let gate = Gate()
    let holding: Task<Void, Never> = holder.projectedValue.load(options: LoadOptions(limiter: limiter)) {
      await gate.wait()
      return 0
    }
    let options = LoadOptions(debounce: .trailing(.seconds(1)), limiter: limiter, clock: clock)
    let task: Task<Void, Never> = state.projectedValue.load(options: options) { 1 }
    try await activity.wait(forPhase: .debouncing)
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    try await activity.wait(forPhase: .waiting)
    #expect(state.wrappedValue == .loading)
    gate.open()
    try await activity.wait(forPhases: [.debouncing, .waiting, .running(attempt: 1), .idle])
    await holding.value
    await task.value
    #expect(state.wrappedValue == .loaded(1))
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  @Test func aPhaseWaitThatFailsListsThePhasesRecorded() async throws {
    let state = Loadable<Int>()
    let activity = StateRecorder(activityOf: state.projectedValue)
    await state.projectedValue.load(options: LoadOptions(retry: .constant(.zero, maxRetries: 1))) {
      throw Unavailable()
    }
    #expect(activity.phases == [.running(attempt: 1), .retrying(attempt: 2), .running(attempt: 2), .idle])
    let error = await #expect(throws: StateRecorder<LoadActivity>.TimeLimitExceeded.self) {
      try await activity.wait(forPhase: .waiting, timeLimit: .milliseconds(20))
    }
    #expect(
      error?.description
        == "waited 0.02s for .waiting; recorded 4 phases: "
        + "[.running(attempt: 1), .retrying(attempt: 2), .running(attempt: 2), .idle]")
    let history = await #expect(throws: StateRecorder<LoadActivity>.UnexpectedHistory.self) {
      try await activity.wait(forPhases: [.running(attempt: 1), .idle])
    }
    #expect(
      history?.description
        == "expected 2 phases: [.running(attempt: 1), .idle]; recorded 4 phases: "
        + "[.running(attempt: 1), .retrying(attempt: 2), .running(attempt: 2), .idle]")
  }

  @Test func aProcessActivityIsRecordedToo() async throws {
    let save = Processed.Process<SingleProcess>()
    let activity = StateRecorder(activityOf: save.projectedValue)
    await save.projectedValue.run {}
    try await activity.wait(forPhases: [.running(attempt: 1), .idle])
  }
}

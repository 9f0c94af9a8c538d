import ProcessedTesting
import Testing

@testable import Processed

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

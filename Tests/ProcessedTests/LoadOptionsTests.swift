import ProcessedTesting
import Testing

@testable import Processed

/// A model with declaration options on its wrappers, and a plain key-path state.
@MainActor
final class OptionsModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  @Loadable(options: LoadOptions(timeout: .zero)) var timedOut: LoadableState<Int>
  @Loadable var plain: LoadableState<Int>
  @Processed.Process(options: LoadOptions(timeout: .seconds(-1))) var save
  @Processed.Process<OwnerRunKind>(options: LoadOptions(timeout: .zero)) var action
  var keyPathState: LoadableState<Int> = .absent
}

@MainActor
@Suite struct LoadOptionsTests {
  @Test func theDefaultsAreThoseOfALoadWithoutOptions() {
    let options = LoadOptions.default
    #expect(options.retry.maxRetries == 0)
    #expect(options.timeout == nil)
    #expect(options.debounce == nil)
    #expect(options.overlap == .cancelRunning)
    #expect(options.limiter == nil)
    #expect(options.clock is ContinuousClock)
  }

  /// The fields live in one shared box (`LoadOptions+Fields.swift`): a write must reach only the value written.
  @Test func optionsAreValuesAWriteChangesOnlyTheCopyWritten() {
    let limiter = LoadLimiter(maxConcurrent: 1)
    let original = LoadOptions(timeout: .seconds(5), limiter: limiter, staleTime: .seconds(60))
    var copy = original
    copy.timeout = .seconds(1)
    copy.debounce = .trailing(.milliseconds(300))
    copy.networkMode = .always
    #expect(original.timeout == .seconds(5))
    #expect(original.debounce == nil)
    #expect(original.networkMode == .online)
    #expect(copy.timeout == .seconds(1))
    #expect(copy.debounce == .trailing(.milliseconds(300)))
    #expect(copy.networkMode == .always)
    // Fields not written are the original's.
    #expect(copy.limiter === limiter)
    #expect(copy.staleTime == .seconds(60))
    // The split a cache makes leaves the call's options as they were.
    let fetch = copy.forFetch
    #expect(fetch.debounce == nil)
    #expect(copy.debounce == .trailing(.milliseconds(300)))
    var defaults = LoadOptions.default
    defaults.retry = .constant(.seconds(1), maxRetries: 2)
    #expect(LoadOptions.default.retry.maxRetries == 0)
    #expect(defaults.retry.maxRetries == 2)
  }

  @Test(arguments: [Duration.zero, .seconds(-1), .nanoseconds(-1), .seconds(Int64.min)])
  func aNonPositiveTimeoutEndsTheLoadAtOnceWithoutRunningTheBlock(_ timeout: Duration) async {
    let model = OptionsModel()
    let history = StateRecorder(model.$plain)
    var ran = false
    await model.$plain.load(options: LoadOptions(timeout: timeout)) {
      ran = true
      return 1
    }
    #expect(!ran)
    #expect(history.values == [.loading, .error(TimeoutError())])
  }

  @Test func declarationOptionsApplyWhenACallGivesNone() async {
    let model = OptionsModel()
    let history = StateRecorder(model.$timedOut)
    await model.$timedOut.load { 1 }
    #expect(history.values == [.loading, .error(TimeoutError())])
    // The key-path face of the same wrapper uses its declaration options too.
    await model.load(\.timedOut) { 2 }
    #expect(history.values == [.loading, .error(TimeoutError()), .loading, .error(TimeoutError())])
  }

  @Test func aCallsOptionsReplaceTheDeclarationsAsAWhole() async {
    let model = OptionsModel()
    await model.$timedOut.load(options: .default) { 1 }
    #expect(model.timedOut == .loaded(1))
    await model.load(\.timedOut, options: LoadOptions()) { 2 }
    #expect(model.timedOut == .loaded(2))
  }

  @Test func processDeclarationOptionsApplyToEveryForm() async {
    let model = OptionsModel()
    let saves = StateRecorder(model.$save)
    await model.$save.run {}
    guard case .failed(let process, let error) = saves.values.last else {
      Issue.record("expected a failed run, got \(saves.values)")
      return
    }
    #expect(error is TimeoutError)
    #expect(saves.values == [.running(process), .failed(process: process, error: TimeoutError())])

    let actions = StateRecorder(model.$action)
    await model.run(\.action, as: .save) {}
    #expect(actions.values == [.running(.save), .failed(process: .save, error: TimeoutError())])
    await model.run(\.action, as: .delete, options: .default) {}
    #expect(model.action == .finished(.delete))
  }

  @Test func keyPathStatesUseTheCallsOptions() async {
    let model = OptionsModel()
    await model.load(\.keyPathState, options: LoadOptions(timeout: .zero)) { 1 }
    #expect(model.keyPathState == .error(TimeoutError()))
    await model.load(\.keyPathState) { 1 }
    #expect(model.keyPathState == .loaded(1))
  }

  @Test func aNonPositiveTimeoutNeverRunsAYieldingBlock() async {
    let model = OptionsModel()
    let history = StateRecorder(model.$plain)
    let task: Task<Void, Never> = model.$plain.load(options: LoadOptions(timeout: .zero)) { yield in
      yield(.loaded(1))
    }
    await task.value
    #expect(history.values == [.loading, .error(TimeoutError())])
  }

  @Test func aLimitersMaximumIsKeptAndItsCountsStartAtZero() {
    let limiter = LoadLimiter(maxConcurrent: 3)
    #expect(limiter.maxConcurrent == 3)
    #expect(limiter.running == 0)
    #expect(limiter.waiting == 0)
  }

  @Test func retryPoliciesKeepTheirParameters() {
    let standard = RetryPolicy.standard
    #expect(standard.maxRetries == 3)
    #expect(standard.initialDelay == .seconds(1))
    #expect(standard.multiplier == 2)
    #expect(standard.maxDelay == .seconds(30))
    #expect(standard.jitter == .full)
    let constant = RetryPolicy.constant(.seconds(2), maxRetries: 4)
    #expect(constant.initialDelay == .seconds(2))
    #expect(constant.maxDelay == .seconds(2))
    #expect(constant.jitter == .none)
    #expect(RetryPolicy.never.maxRetries == 0)
  }

  @Test func optionsGivenToASilentLoadApplyWithoutWritingLoading() async {
    let model = OptionsModel()
    let history = StateRecorder(model.$plain)
    await model.$plain.load(silently: true, options: LoadOptions(timeout: .zero)) { 1 }
    #expect(history.values == [.error(TimeoutError())])
    await model.$plain.load(silently: true, options: .default) { 2 }
    #expect(history.values == [.error(TimeoutError()), .loaded(2)])
  }
}

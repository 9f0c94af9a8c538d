import ProcessedTesting
import Testing

@testable import Processed

/// A class that is not an `ObservableModel`.
@MainActor
final class PlainViewModel: LoadableSupport, ProcessSupport {
  var numbers: LoadableState<Int> = .absent
  var saving: SingleProcessState = .idle
}

/// `model.loadables.x` and `model.processes.y`: the controller types of `$x`, acting on a key path of an instance.
@MainActor
@Suite struct KeyPathControllerTests {
  struct Failure: Error, Equatable {}

  /// Written for `$x`.
  func loadTwice(_ controller: LoadableController<Int>) async -> [LoadableState<Int>] {
    var history: [LoadableState<Int>] = []
    let token = controller.observe { history.append($0) }
    await controller.load { 1 }
    await controller.load { throw Failure() }
    token.cancel()
    return history
  }

  @Test func aKeyPathControllerWorksInCodeWrittenForTheWrapperFace() async {
    let model = PolicyModel()
    let fromKeyPath = await loadTwice(model.loadables.keyPathResults)
    let fromWrapper = await loadTwice(model.$results)
    let expected: [LoadableState<Int>] = [.loading, .loaded(1), .loading, .error(Failure())]
    #expect(fromKeyPath == expected)
    #expect(fromWrapper == expected)
    #expect(model.keyPathResults == .error(Failure()))
  }

  @Test func itsObserversSeeExactlyWhatTheModelsObserversSee() async {
    let model = PolicyModel()
    let viaModel = StateRecorder(model, \.keyPathResults)
    let viaController = StateRecorder(model.loadables.keyPathResults)
    await model.load(\.keyPathResults) { 1 }  // the key-path call
    await model.loadables.keyPathResults.load { 2 }  // the controller
    model.loadables.keyPathResults.reset()
    #expect(viaController.values == [.loading, .loaded(1), .loading, .loaded(2), .absent])
    #expect(viaController.values == viaModel.values)
  }

  @Test func latestWinsAcrossTheControllerAndTheKeyPathCalls() async {
    let model = PolicyModel()
    let controller = model.loadables.keyPathResults
    let gate = Gate()
    let first: Task<Void, Never> = controller.load {
      await gate.wait()
      return 1
    }
    #expect(controller.state == .loading)
    #expect(controller.activity.phase == .running(attempt: 1))
    model.cancel(\.keyPathResults)  // the key-path face reaches the controller's load
    #expect(controller.activity.phase == .idle)
    let second: Task<Void, Never> = model.load(\.keyPathResults) { 2 }
    gate.open()
    await first.value
    await second.value
    #expect(model.keyPathResults == .loaded(2))
  }

  @Test func aWrapperPropertysControllerIsTheWrappersOwn() async {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    let gate = Gate()
    let task: Task<Void, Never> = model.loadables.results.load {
      await gate.wait()
      return 1
    }
    model.$results.cancel()  // reaches the load started through `loadables`
    gate.open()
    await task.value
    #expect(history.values == [.loading])
    await model.loadables.results.load { 2 }
    #expect(model.$results.lastValue == 2)
    #expect(model.loadables.results.lastValue == 2)
  }

  @Test func statesYieldsTheCurrentStateThenEveryChange() async {
    let model = PolicyModel()
    model.keyPathResults = .loaded(0)
    let controller = model.loadables.keyPathResults
    var iterator = controller.states.makeAsyncIterator()
    #expect(await iterator.next() == .loaded(0))
    await controller.load { 1 }
    #expect(await iterator.next() == .loading)
    #expect(await iterator.next() == .loaded(1))
  }

  /// Which properties of `PolicyModel` a controller lifetime test drives.
  enum Property: CaseIterable {
    /// `keyPathResults` / `keyPathSave`: plain stored properties.
    case plain
    /// `results` / `save`: `@Loadable` / `@Process` wrappers, whose controllers are the wrappers' own.
    case wrapper
  }

  @Test(arguments: Property.allCases)
  func aControllerKeepsNeitherItsModelNorItsStateAliveAndDoesNothingOnceTheModelIsGone(_ property: Property)
    async throws
  {
    var model: PolicyModel? = PolicyModel()
    weak let released = model
    let loads = property == .plain ? model!.loadables.keyPathResults : model!.loadables.results
    let runs = property == .plain ? model!.processes.keyPathSave : model!.processes.save
    let stream = loads.states
    await loads.load { 1 }
    model = nil
    #expect(released == nil)
    var lateChanges = 0
    let token = loads.observe { _ in lateChanges += 1 }
    let activityToken = loads.observeActivity { _ in lateChanges += 1 }
    var ran = false
    let task: Task<Void, Never> = loads.load {
      ran = true
      return 2
    }
    await task.value
    await loads.load { 3 }
    await runs.run { ran = true }
    loads.cancel()
    loads.reset()
    runs.reset()
    #expect(!ran)
    #expect(loads.state == .absent)
    #expect(loads.lastValue == nil)
    #expect(runs.state == .idle)
    #expect(loads.activity == LoadActivity())
    // The stream ends: the model's registry, and a wrapper's storage, went with the model (a stream that never ends
    // fails at the safety limit instead of hanging the test).
    let ended = StateRecorder<[LoadableState<Int>]>()
    Task {
      var seen: [LoadableState<Int>] = []
      for await state in stream { seen.append(state) }
      ended.record(seen)
    }
    try await ended.wait(forCount: 1)
    #expect(ended.values == [[.absent, .loading, .loaded(1)]])
    #expect(lateChanges == 0)  // the observers of a controller whose model is gone hear nothing
    token.cancel()
    activityToken.cancel()
  }

  @Test func aKeyPathStatesLastValueIsKeptBeforeAnyControllerExists() async {
    struct Oops: Error {}
    let model = PolicyModel()
    await model.load(\.keyPathResults) { 1 }
    await model.load(\.keyPathResults) { throw Oops() }
    #expect(model.keyPathResults == .error(Oops()))
    #expect(model.loadables.keyPathResults.lastValue == 1)
    await model.load(\.keyPathResults) { 2 }
    let gate = Gate()
    let reload: Task<Void, Never> = model.load(\.keyPathResults) {
      await gate.wait()
      return 3
    }
    #expect(model.loadables.keyPathResults.lastValue == 2)  // kept through .loading
    gate.open()
    await reload.value
    model.reset(\.keyPathResults)
    #expect(model.loadables.keyPathResults.lastValue == nil)  // a reset forgets it
  }

  /// On a class that is not an `ObservableModel`, the last value is kept from the moment a controller is made —
  /// also when the controller is never read or observed before the state moves on.
  @Test func onAPlainClassTheLastValueIsKeptFromTheControllersCreation() async {
    let model = PlainViewModel()
    let controller = model.loadables.numbers
    await controller.load { 1 }
    let gate = Gate()
    let failing: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      throw Failure()
    }
    #expect(model.numbers == .loading)
    #expect(controller.lastValue == 1)  // kept through .loading
    gate.open()
    await failing.value
    #expect(model.numbers == .error(Failure()))
    #expect(controller.lastValue == 1)  // and .error
  }

  /// `lastValue` is `nil` whenever the state is `.absent`, also after a direct write the library does not see.
  @Test func theLastValueIsNilWhenTheStateIsAbsentAfterADirectWrite() async {
    let model = KeyPathDidSetModel()
    await model.load(\.numbers) { [1] }
    await model.load(\.numbers) { throw Failure() }
    #expect(model.loadables.numbers.lastValue == [1])
    model.numbers = .absent  // its didSet notifies
    #expect(model.loadables.numbers.lastValue == nil)
    let plain = PlainViewModel()
    await plain.loadables.numbers.load { 1 }
    plain.numbers = .absent  // unseen by the library
    #expect(plain.loadables.numbers.lastValue == nil)
  }

  @Test func onAClassThatIsNotAnObservableModelObserversSeeTheLibrarysWrites() async {
    let model = PlainViewModel()
    let controller = model.loadables.numbers
    var history: [LoadableState<Int>] = []
    let token = controller.observe { history.append($0) }
    await controller.load { 1 }
    await model.load(\.numbers) { 2 }
    model.reset(\.numbers)
    model.numbers = .loaded(9)  // a direct write of a plain property: not seen
    #expect(history == [.loading, .loaded(1), .loading, .loaded(2), .absent])
    #expect(controller.state == .loaded(9))
    token.cancel()
  }

  @Test func activityLastValueAndRefreshOfAKeyPathState() async throws {
    let clock = TestClock()
    let model = PolicyModel()
    let controller = model.loadables.keyPathResults
    var phases: [LoadActivity.Phase] = []
    let token = controller.observeActivity { phases.append($0.phase) }
    await controller.load { 1 }
    #expect(controller.lastValue == 1)
    let options = LoadOptions(retry: .constant(.seconds(1), maxRetries: 1), clock: clock)
    let refresh: Task<Void, Never> = controller.refresh(options: options) { throw Failure() }
    try await clock.waitForSleepers(1)
    #expect(controller.activity.phase == .retrying(attempt: 2))
    clock.advance(by: .seconds(1))
    await refresh.value
    #expect(model.keyPathResults == .loaded(1))  // kept on failure
    #expect(controller.activity == LoadActivity(phase: .idle, lastError: Failure()))
    #expect(
      phases == [.running(attempt: 1), .idle, .running(attempt: 1), .retrying(attempt: 2), .running(attempt: 2), .idle])
    let gate = Gate()
    let failing: Task<Void, Never> = controller.load {
      await gate.wait()
      throw Failure()
    }
    #expect(controller.lastValue == 1)  // kept through .loading
    gate.open()
    await failing.value
    #expect(controller.lastValue == 1)  // and .error
    controller.reset()
    #expect(controller.lastValue == nil)
    #expect(controller.activity == LoadActivity())
    token.cancel()
  }

  @Test func processControllersOfKeyPathStates() async {
    let model = PolicyModel()
    let controller = model.processes.keyPathSave
    let history = StateRecorder(controller)
    var fractions: [Double?] = []
    let token = controller.observeActivity { fractions.append($0.progress?.fraction) }
    await controller.run {
      LoadProgress.report(fraction: 0.5)
    }
    #expect(history.values.count == 2 && history.values.last?.hasFinished == true)
    #expect(fractions == [nil, 0.5, nil])
    let plain = PlainViewModel()
    await plain.processes.saving.run { throw Failure() }
    #expect(plain.saving.hasFailed)
    token.cancel()
  }
}

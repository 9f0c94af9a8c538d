import ProcessedTesting
import Testing

@testable import Processed

// MARK: - Observation

/// Drives the state at `keyPath` through every kind of change a key-path call makes.
@MainActor
func runLoadableScenario<Model: LoadableSupport>(
  _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, LoadableState<[Int]>>
) async {
  await model.load(keyPath) { [1] }
  await model.load(keyPath) { yield in
    yield(.loaded([2]))
    yield(.loaded([2, 3]))
  }
  await model.load(keyPath) { throw KeyPathTestError.boom }
  let gate = Gate()
  let cancelled: Task<Void, Never> = model.load(keyPath) {
    await gate.wait()
    return [4]
  }
  await gate.untilWaiting(1)
  model.cancel(keyPath)
  gate.open()
  await cancelled.value
  model.reset(keyPath)
  model.reset(keyPath)
  await model.load(keyPath, silently: true) { throw ResetLoadable() }
  await model.load(keyPath) { throw ResetLoadable() }
  await model.load(keyPath, interrupts: [.zero]) {
    await untilCancelled()
    return [5]
  } onInterrupt: { _ in
    throw TimeoutError()
  }
}

/// What ``runLoadableScenario(_:_:)`` writes, change by change.
let loadableScenarioHistory: [LoadableState<[Int]>] = [
  .loading, .loaded([1]),
  .loading, .loaded([2]), .loaded([2, 3]),
  .loading, .error(KeyPathTestError.boom),
  .loading,
  .absent,
  .loading, .absent,
  .loading, .error(TimeoutError()),
]

@MainActor
@Suite struct LoadableSupportObservationTests {
  @Test func plainPropertyOfAnObservableModel() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    await runLoadableScenario(model, \.numbers)
    #expect(history.values == loadableScenarioHistory)
  }

  @Test func propertyWhoseDidSetNotifiesIsStillNotifiedOnce() async {
    let model = KeyPathDidSetModel()
    let history = StateRecorder(model, \.numbers)
    model.numbers = .loaded([0])
    #expect(history.values == [.loaded([0])])  // the didSet does notify on its own
    await runLoadableScenario(model, \.numbers)
    #expect(history.values == [.loaded([0])] + loadableScenarioHistory)
    #expect(model.numbersLog == history.values)
  }

  /// A key-path write is one write of the property, whatever the property is: its `willSet` and `didSet` run once
  /// each, with the new and the old value, and a computed property's setter runs once, with the written state.
  @Test func propertyObserversAndSettersRunOncePerWrite() async {
    let model = KeyPathAccessorModel()
    await model.load(\.observed) { yield in
      yield(.loaded([1]))
      yield(.loaded([2]))
    }
    #expect(
      model.log == [
        "willSet loading", "didSet absent", "willSet loaded([1])", "didSet loading",
        "willSet loaded([2])", "didSet loaded([1])",
      ])
    model.log = []
    await model.load(\.computed) { yield in
      yield(.loaded([1]))
      yield(.loaded([2]))
    }
    #expect(model.log.filter { $0.hasPrefix("set") } == ["set loading", "set loaded([1])", "set loaded([2])"])
    #expect(model.storage == .loaded([2]))
  }

  @Test func observedPropertyIsNotifiedOnce() async {
    let model = KeyPathObservedModel()
    let history = StateRecorder(model, \.numbers)
    model.numbers = .loaded([0])
    #expect(history.values == [.loaded([0])])  // @Observed does notify on its own
    await runLoadableScenario(model, \.numbers)
    #expect(history.values == [.loaded([0])] + loadableScenarioHistory)
  }

  @Test func loadableWrapperPropertyIsNotifiedOnce() async {
    let model = KeyPathWrappedModel()
    let history = StateRecorder(model, \.numbers)
    await runLoadableScenario(model, \.numbers)
    #expect(history.values == loadableScenarioHistory)
  }

  @Test func classThatIsNotAnObservableModelSeesEveryWriteInDidSet() async {
    let model = KeyPathPlainModel()
    await runLoadableScenario(model, \.numbers)
    #expect(model.numbersLog == loadableScenarioHistory)
  }

  @Test func observerStartingANewLoadFromTheResultIsNotDisturbed() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    let next = KeyPathBox<Task<Void, Never>?>(nil)
    let token = model.observe(\.numbers) { state in
      if state == .loaded([1]) {
        next.value = model.load(\.numbers) { [2] }
      }
    }
    await model.load(\.numbers) { [1] }
    await next.value?.value
    #expect(history.values == [.loading, .loaded([1]), .loading, .loaded([2])])
    #expect(keyPathHostCount(of: model) == 0)
    token.cancel()
  }

  @Test func observerResettingFromAYieldStopsTheLoad() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    let token = model.observe(\.numbers) { state in
      if state == .loaded([1]) { model.reset(\.numbers) }
    }
    await model.load(\.numbers) { yield in
      yield(.loaded([1]))
      yield(.loaded([2]))
    }
    #expect(history.values == [.loading, .loaded([1]), .absent])
    #expect(keyPathHostCount(of: model) == 0)
    token.cancel()
  }

  @Test func cancelledObserverHearsNothingMore() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    await model.load(\.numbers) { [1] }
    history.token?.cancel()
    await model.load(\.numbers) { [2] }
    #expect(history.values == [.loading, .loaded([1])])
  }
}

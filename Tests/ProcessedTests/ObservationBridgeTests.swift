#if canImport(Observation)
  import Observation
  import ProcessedTesting
  import Testing

  @testable import Processed

  /// A model that opts in to the Observation bridge: `Observable` next to `ObservableModel`, no macro.
  @MainActor
  final class BridgedModel: ObservableModel, Observable, LoadableSupport, ProcessSupport {
    let observers = ObserverRegistry()
    @Loadable var count: LoadableState<Int>
    @Processed.Process var save
    @Observed var title = ""
    @Observed var other = 0
  }

  /// The same properties without the opt-in.
  @MainActor
  final class UnbridgedModel: ObservableModel, LoadableSupport {
    let observers = ObserverRegistry()
    @Loadable var count: LoadableState<Int>
    @Observed var title = ""
  }

  /// The example in `ObservableModel`'s documentation.
  @MainActor
  final class TrackedFeedModel: ObservableModel, Observable {
    let observers = ObserverRegistry()
    @Loadable var feed: LoadableState<[String]>
  }

  /// Counts the `onChange` calls of one `withObservationTracking` registration.
  final class ChangeCounter: Sendable {
    private let box = LockedBox(0)
    var count: Int { box.withLock { $0 } }
    func increment() { box.withLock { $0 += 1 } }
  }

  @MainActor
  @Suite struct ObservationBridgeTests {
    /// Tracks what `read` reads; returns the counter of the next change.
    func track(_ read: () -> Void) -> ChangeCounter {
      let counter = ChangeCounter()
      withObservationTracking(read) { counter.increment() }
      return counter
    }

    @Test func aLoadOfATrackedLoadableCallsOnChangeOnce() async {
      let model = BridgedModel()
      let changes = track { _ = model.count }
      await model.$count.load { 1 }
      // Tracking is one-shot: `.loading` triggers it, `.loaded(1)` finds no registration left.
      #expect(changes.count == 1)
      #expect(model.count == .loaded(1))
    }

    @Test func everyFaceOfTheStateIsTracked() async {
      let model = BridgedModel()
      let byKeyPath = track { _ = model.count }
      await model.load(\.count) { 1 }
      #expect(byKeyPath.count == 1)
      let byWrite = track { _ = model.count }
      model.count = .absent
      #expect(byWrite.count == 1)
      let byReset = track { _ = model.count }
      model.$count.reset()  // already `.absent`: nothing is written
      #expect(byReset.count == 0)
      model.count = .loaded(2)
      #expect(byReset.count == 1)
    }

    @Test func processesAndObservedPropertiesAreTracked() async {
      let model = BridgedModel()
      let process = track { _ = model.save }
      await model.$save.run {}
      #expect(process.count == 1)
      #expect(model.save.hasFinished)
      let title = track { _ = model.title }
      model.title = "new"
      #expect(title.count == 1)
      #expect(model.title == "new")
    }

    @Test func onlyWhatWasReadIsTracked() async {
      let model = BridgedModel()
      let changes = track { _ = model.title }
      model.other = 1
      await model.$count.load { 1 }
      #expect(changes.count == 0)
      model.title = "read"
      #expect(changes.count == 1)
    }

    @Test func aFirstWriteBeforeAnyReadIsTracked() {
      let model = BridgedModel()
      model.title = "first"  // links the property and resolves the bridge
      let changes = track { _ = model.title }
      model.title = "second"
      #expect(changes.count == 1)
    }

    @Test func aReadBeforeAnyWriteIsTracked() async {
      let model = BridgedModel()
      let title = track { _ = model.title }
      let count = track { _ = model.count }
      model.title = "first"
      model.count = .loaded(1)
      #expect(title.count == 1)
      #expect(count.count == 1)
    }

    @Test func theModelsOwnObserversStillHearEveryChangeOnce() async {
      let model = BridgedModel()
      let history = StateRecorder<LoadableState<Int>>()
      history.token = model.observe(\.count) { history.record($0) }
      _ = track { _ = model.count }
      await model.$count.load { 1 }
      #expect(history.values == [.loading, .loaded(1)])
    }

    @Test func modelsThatDoNotOptInHaveNoBridge() {
      let model = UnbridgedModel()
      _ = model.count
      model.title = "x"
      _ = model.title
      #expect(model.$count.storage.modelLink?.isTrackedByObservation == false)
      let changes = track { _ = model.count }
      model.count = .loaded(1)
      #expect(changes.count == 0)
    }

    @Test func theDocumentedExampleIsTracked() async {
      let model = TrackedFeedModel()
      let changes = track { _ = model.feed }
      await model.$feed.load { ["first"] }
      #expect(changes.count == 1)
      #expect(model.feed == .loaded(["first"]))
    }

    @Test func theBridgeDoesNotKeepTheModelAlive() async {
      var model: BridgedModel? = BridgedModel()
      weak let weakModel = model
      _ = track { _ = model!.count }
      await model!.$count.load { 1 }
      model = nil
      #expect(weakModel == nil)
    }
  }
#endif

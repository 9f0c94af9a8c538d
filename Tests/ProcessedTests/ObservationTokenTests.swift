import ProcessedTesting
import Testing

@testable import Processed

@MainActor
private final class Note: ObservableModel {
  let observers = ObserverRegistry()
  @Observed var text = ""
}

/// Sets its flag when it is deallocated, to show whether a handler that captured it was released.
private final class Canary: Sendable {
  let released: LockedBox<Bool>

  init(_ released: LockedBox<Bool>) { self.released = released }

  deinit { released.withLock { $0 = true } }

  func touch() {}
}

/// What a model's `deinit` left behind: the token it got from `observe`, and the flag of the handler's canary.
private final class DeinitReport: Sendable {
  let tokens = LockedBox<[ObservationToken]>([])
  let handlerReleased = LockedBox(false)
  let handlerCalls = LockedBox(0)
  /// Fired after each token is added, for a test that waits for the `deinit` to run.
  let tokenAdded = Signal()

  func add(_ token: ObservationToken) {
    tokens.withLock { $0.append(token) }
    tokenAdded.fire()
  }
}

/// A model (not main-actor isolated, so its `deinit` is nonisolated) that observes itself while being deallocated.
private final class SelfObservingInDeinit: ObservableModel {
  let observers = ObserverRegistry()
  var value = 0
  let report: DeinitReport

  init(report: DeinitReport) { self.report = report }

  deinit {
    let report = report
    let canary = Canary(report.handlerReleased)
    let token = observe(\.value) { _ in
      canary.touch()
      report.handlerCalls.withLock { $0 += 1 }
    }
    report.add(token)
  }
}

/// A main-actor model whose `isolated deinit` observes one of its `@Observed` properties, so `observe` also reads it.
@MainActor
private final class MainActorSelfObservingInDeinit: ObservableModel {
  let observers = ObserverRegistry()
  @Observed var text = ""
  let report: DeinitReport

  init(report: DeinitReport) { self.report = report }

  isolated deinit {
    let report = report
    let canary = Canary(report.handlerReleased)
    let token = observe(\.text) { _ in
      canary.touch()
      report.handlerCalls.withLock { $0 += 1 }
    }
    report.add(token)
  }
}

@MainActor
@Suite struct ObservationTokenTests {
  @Test func cancellingTwiceIsHarmless() {
    let model = Note()
    let recorder = StateRecorder<String>()
    let other = model.observe(\.text) { recorder.record("other:\($0)") }
    let token = model.observe(\.text) { recorder.record("token:\($0)") }
    model.text = "1"
    token.cancel()
    #expect(model.observers.observerCount == 1)
    token.cancel()
    #expect(model.observers.observerCount == 1)
    model.text = "2"
    #expect(recorder.values == ["other:1", "token:1", "other:2"])
    other.cancel()
  }

  @Test func cancellingFromInsideItsOwnHandlerStopsLaterCalls() {
    let model = Note()
    let recorder = StateRecorder<String>()
    recorder.token = model.observe(\.text) { value in
      recorder.record(value)
      recorder.token?.cancel()
      recorder.token?.cancel()
    }
    model.text = "1"
    model.text = "2"
    #expect(recorder.values == ["1"])
    #expect(model.observers.observerCount == 0)
  }

  @Test func releasingTheLastReferenceCancels() {
    let model = Note()
    let recorder = StateRecorder<String>()
    var token: ObservationToken? = model.observe(\.text) { recorder.record($0) }
    model.text = "1"
    #expect(recorder.values == ["1"])
    #expect(token != nil)

    token = nil
    #expect(model.observers.observerCount == 0)
    model.text = "2"
    #expect(recorder.values == ["1"])
  }

  @Test func releasingTheTokenFromInsideItsHandlerCancels() {
    let model = Note()
    let recorder = StateRecorder<String>()
    recorder.token = model.observe(\.text) { value in
      recorder.record(value)
      recorder.token = nil
    }
    model.text = "1"
    model.text = "2"
    #expect(recorder.values == ["1"])
    #expect(model.observers.observerCount == 0)
  }

  @Test func storeInKeepsTheTokenAliveUntilTheSetLetsGo() {
    let model = Note()
    let recorder = StateRecorder<String>()
    var tokens = Set<ObservationToken>()
    model.observe(\.text) { recorder.record("A:\($0)") }.store(in: &tokens)
    model.observe(\.text) { recorder.record("B:\($0)") }.store(in: &tokens)
    #expect(tokens.count == 2)

    model.text = "1"
    #expect(recorder.values == ["A:1", "B:1"])
    tokens.removeAll()
    #expect(model.observers.observerCount == 0)
    model.text = "2"
    #expect(recorder.values == ["A:1", "B:1"])
  }

  @Test func storingTheSameTokenTwiceKeepsOneEntry() {
    let model = Note()
    var tokens = Set<ObservationToken>()
    let token = model.observe(\.text) { _ in }
    token.store(in: &tokens)
    token.store(in: &tokens)
    #expect(tokens.count == 1)
    #expect(tokens.contains(token))
  }

  @Test func equalityAndHashingFollowIdentity() {
    let model = Note()
    let handler: @MainActor (String) -> Void = { _ in }
    let first = model.observe(\.text, handler)
    let second = model.observe(\.text, handler)
    let alias = first
    #expect(first == alias)
    #expect(first.hashValue == alias.hashValue)
    #expect(first != second)
    #expect(Set([first, second, alias]).count == 2)
    #expect([first: "first", second: "second"][alias] == "first")
  }

  // MARK: Outliving the model

  @Test func aTokenThatOutlivesItsModelCancelsAsANoOp() {
    let recorder = StateRecorder<String>()
    var model: Note? = Note()
    weak let weakModel = model
    var token: ObservationToken? = model?.observe(\.text) { recorder.record($0) }
    model?.text = "1"
    model = nil
    #expect(weakModel == nil)

    token?.cancel()
    token?.cancel()
    token = nil
    #expect(recorder.values == ["1"])
  }

  @Test func observingAModelFromItsNonisolatedDeinitGivesATokenThatIsNeverCalled() {
    let report = DeinitReport()
    var model: SelfObservingInDeinit? = SelfObservingInDeinit(report: report)
    model?.value = 1
    model = nil

    let tokens = report.tokens.withLock { $0 }
    #expect(tokens.count == 1)
    #expect(report.handlerReleased.withLock { $0 } == true)
    for token in tokens {
      token.cancel()
      token.cancel()
    }
    #expect(report.handlerCalls.withLock { $0 } == 0)
  }

  @Test func observingAModelFromItsIsolatedDeinitGivesATokenThatIsNeverCalled() async {
    let report = DeinitReport()
    var model: MainActorSelfObservingInDeinit? = MainActorSelfObservingInDeinit(report: report)
    model?.text = "before"
    model = nil
    // An isolated deinit may be scheduled rather than run inline; wait for it without assuming either.
    await until(.signal(report.tokenAdded)) { report.tokens.withLock { $0.count } == 1 }

    #expect(report.handlerReleased.withLock { $0 } == true)
    for token in report.tokens.withLock({ $0 }) {
      token.cancel()
      token.cancel()
    }
    #expect(report.handlerCalls.withLock { $0 } == 0)
  }

  @Test func aHandlerIsReleasedWithItsModelWhileItsTokenIsStillHeld() {
    let released = LockedBox(false)
    var model: Note? = Note()
    let token: ObservationToken
    do {
      let canary = Canary(released)
      token = model!.observe(\.text) { _ in canary.touch() }
    }
    #expect(released.withLock { $0 } == false)
    model = nil
    #expect(released.withLock { $0 } == true)
    token.cancel()
  }
}

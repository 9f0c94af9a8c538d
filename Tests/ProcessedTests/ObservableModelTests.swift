import ProcessedTesting
import Testing

@testable import Processed

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A model with both ways of declaring an observable property, and one property nobody can observe.
@MainActor
private final class Article: ObservableModel {
  let observers = ObserverRegistry()
  @Observed var title = ""
  @Observed var views = 0
  var plain = 0 {
    didSet { notifyObservers(\.plain) }
  }
  var silent = 0
}

/// A model meant to be subclassed: its observable properties are declared here, not in the subclass.
@MainActor
private class BaseArticle: ObservableModel {
  let observers = ObserverRegistry()
  @Observed var title = ""
  var plain = 0 {
    didSet { notifyObservers(\.plain) }
  }
}

@MainActor
private final class DerivedArticle: BaseArticle {}

/// The thread the caller runs on, to show that a handler runs on the main actor's thread, inline.
private func currentThread() -> pthread_t { pthread_self() }

@MainActor
@Suite struct ObservableModelTests {
  // MARK: Delivery

  @Test func observedPropertyDeliversEveryWriteOnceInOrderBeforeTheWriteReturns() {
    let model = Article()
    let recorder = StateRecorder<String>()
    recorder.token = model.observe(\.title) { recorder.record($0) }

    model.title = "a"
    #expect(recorder.values == ["a"])
    model.title = "b"
    #expect(recorder.values == ["a", "b"])
    model.title = "c"
    #expect(recorder.values == ["a", "b", "c"])
  }

  @Test func plainPropertyWhoseDidSetNotifiesDeliversEveryWriteOnceInOrder() {
    let model = Article()
    let recorder = StateRecorder<Int>()
    recorder.token = model.observe(\.plain) { recorder.record($0) }

    model.plain = 1
    #expect(recorder.values == [1])
    model.plain += 10
    #expect(recorder.values == [1, 11])
    model.plain = 11
    #expect(recorder.values == [1, 11, 11])
  }

  @Test func registeringDoesNotDeliverTheCurrentValue() {
    let model = Article()
    model.title = "before"
    model.plain = 7
    let titles = StateRecorder<String>()
    let plains = StateRecorder<Int>()
    titles.token = model.observe(\.title) { titles.record($0) }
    plains.token = model.observe(\.plain) { plains.record($0) }
    #expect(titles.values.isEmpty)
    #expect(plains.values.isEmpty)

    model.title = "after"
    #expect(titles.values == ["after"])
    #expect(plains.values.isEmpty)
  }

  @Test func aPropertyThatDoesNotNotifyIsNeverDelivered() {
    let model = Article()
    let recorder = StateRecorder<Int>()
    recorder.token = model.observe(\.silent) { recorder.record($0) }
    model.silent = 1
    model.silent = 2
    #expect(recorder.values.isEmpty)
    #expect(model.observers.observerCount == 1)
  }

  @Test func severalObserversOfOnePropertyAreCalledInRegistrationOrder() {
    let model = Article()
    let log = StateRecorder<String>()
    var tokens = Set<ObservationToken>()
    for name in ["A", "B", "C", "D"] {
      model.observe(\.title) { log.record("\(name):\($0)") }.store(in: &tokens)
    }

    model.title = "x"
    model.title = "y"
    #expect(log.values == ["A:x", "B:x", "C:x", "D:x", "A:y", "B:y", "C:y", "D:y"])
    #expect(tokens.count == 4)
  }

  @Test func observersOfOtherPropertiesAreNotCalled() {
    let model = Article()
    let log = StateRecorder<String>()
    var tokens = Set<ObservationToken>()
    model.observe(\.title) { log.record("title:\($0)") }.store(in: &tokens)
    model.observe(\.views) { log.record("views:\($0)") }.store(in: &tokens)
    model.observe(\.plain) { log.record("plain:\($0)") }.store(in: &tokens)

    model.title = "t"
    #expect(log.values == ["title:t"])
    model.views = 3
    #expect(log.values == ["title:t", "views:3"])
    model.plain = 5
    #expect(log.values == ["title:t", "views:3", "plain:5"])
    model.silent = 9
    #expect(log.values == ["title:t", "views:3", "plain:5"])
  }

  @Test func twoInstancesNeverShareObservers() {
    let first = Article()
    let second = Article()
    let log = StateRecorder<String>()
    var tokens = Set<ObservationToken>()
    first.observe(\.title) { log.record("first:\($0)") }.store(in: &tokens)
    second.observe(\.title) { log.record("second:\($0)") }.store(in: &tokens)
    first.observe(\.plain) { log.record("first:\($0)") }.store(in: &tokens)
    second.observe(\.plain) { log.record("second:\($0)") }.store(in: &tokens)

    first.title = "1"
    second.title = "2"
    second.plain = 3
    first.plain = 4
    #expect(log.values == ["first:1", "second:2", "second:3", "first:4"])
  }

  // MARK: Main actor

  @Test func handlersRunOnTheMainActorThreadInlineAlsoForWritesThatHopFromABackgroundTask() async {
    let model = Article()
    let threads = StateRecorder<Bool>()
    let values = StateRecorder<String>()
    // The writer's thread, set by each write: a handler runs inline, on the thread of the write it hears of. (Which
    // thread runs the main actor's jobs is the executor's business: on Linux it need not be the same one each time.)
    var writer = currentThread()
    values.token = model.observe(\.title) { value in
      MainActor.preconditionIsolated()
      values.record(value)
      threads.record(pthread_equal(currentThread(), writer) != 0)
    }

    model.title = "inline"
    let heardInline = await Task.detached {
      await MainActor.run {
        writer = currentThread()
        model.title = "hopped"
        return values.values.last == "hopped"  // recorded before the write returned
      }
    }.value
    #expect(values.values == ["inline", "hopped"])
    #expect(threads.values == [true, true])
    #expect(heardInline)
  }

  // MARK: Lifetime

  @Test func theRegistryNeverKeepsTheModelAlive() {
    var model: Article? = Article()
    weak let weakModel = model
    let recorder = StateRecorder<String>()
    var tokens = Set<ObservationToken>()
    model?.observe(\.title) { recorder.record($0) }.store(in: &tokens)
    model?.observe(\.plain) { _ in recorder.record("plain") }.store(in: &tokens)
    model?.title = "alive"
    #expect(recorder.values == ["alive"])

    model = nil
    #expect(weakModel == nil)
    #expect(tokens.count == 2)
    for token in tokens { token.cancel() }
    tokens.removeAll()
    #expect(recorder.values == ["alive"])
  }

  @Test func observingFromAnotherActorRegistersForLaterMainActorWrites() async {
    let model = AnyThreadCounterModel()
    let watcher = Watcher()
    let recorder = StateRecorder<Int>()
    let token = await watcher.watch(model) { recorder.record($0) }
    #expect(model.observers.observerCount == 1)

    model.set(1)
    model.set(2)
    #expect(recorder.values == [1, 2])
    token.cancel()
    model.set(3)
    #expect(recorder.values == [1, 2])
    #expect(model.observers.observerCount == 0)
  }

  // MARK: Inherited properties (documented on `observe`)

  /// Observing through a subclass reference uses the key path `\DerivedArticle.title`, but the property notifies on
  /// `\BaseArticle.title`; key paths with different roots are different keys, so the observer is never called. This
  /// is the documented result; the next test shows the documented way to observe an inherited property.
  @Test func aKeyPathRootedAtASubclassDoesNotSeeChangesOfAnInheritedProperty() {
    let model = DerivedArticle()
    let titles = StateRecorder<String>()
    let plains = StateRecorder<Int>()
    titles.token = model.observe(\.title) { titles.record($0) }
    plains.token = model.observe(\.plain) { plains.record($0) }

    model.title = "x"
    model.plain = 1
    #expect(titles.values == [])
    #expect(plains.values == [])
  }

  @Test func observingAnInheritedPropertyThroughTheDeclaringClassDelivers() {
    let model = DerivedArticle()
    let base: BaseArticle = model
    let titles = StateRecorder<String>()
    let plains = StateRecorder<Int>()
    titles.token = base.observe(\.title) { titles.record($0) }
    plains.token = base.observe(\.plain) { plains.record($0) }

    model.title = "x"
    model.plain = 1
    #expect(titles.values == ["x"])
    #expect(plains.values == [1])
  }
}

/// An actor other than the main actor that observes a model.
private actor Watcher {
  func watch(_ model: AnyThreadCounterModel, _ onChange: @escaping @MainActor (Int) -> Void) -> ObservationToken {
    model.observe(\.value, onChange)
  }
}

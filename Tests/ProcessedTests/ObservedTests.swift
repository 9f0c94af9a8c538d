import ProcessedTesting
import Testing

@testable import Processed

/// A value with no `Equatable` conformance, so the wrapper cannot compare old and new.
private struct Opaque {
  let number: Int
}

@MainActor
private final class Draft: ObservableModel {
  let observers = ObserverRegistry()
  @Observed var text = "initial"
  @Observed var other = ""
  @Observed var tags: [String] = []
  @Observed var count = 0
  @Observed var opaque = Opaque(number: 0)
  @Observed var optional: Int? = nil
}

private func requireSendable<T: Sendable>(_: T.Type) {}

@MainActor
@Suite struct ObservedTests {
  @Test func holdsItsInitialValueAndReadingNeverNotifies() {
    let model = Draft()
    let recorder = StateRecorder<String>()
    recorder.token = model.observe(\.text) { recorder.record($0) }
    #expect(model.text == "initial")
    #expect(model.text == "initial")
    #expect(recorder.values.isEmpty)
  }

  @Test func everyWriteNotifiesAlsoOneThatStoresAnEqualValue() {
    let model = Draft()
    let recorder = StateRecorder<String>()
    recorder.token = model.observe(\.text) { recorder.record($0) }
    model.text = "initial"
    model.text = "a"
    model.text = "a"
    model.text = "a"
    #expect(recorder.values == ["initial", "a", "a", "a"])
    #expect(model.text == "a")
  }

  @Test func nonEquatableValuesNotifyOnEveryWrite() {
    let model = Draft()
    let recorder = StateRecorder<Int>()
    recorder.token = model.observe(\.opaque) { recorder.record($0.number) }
    model.opaque = Opaque(number: 1)
    model.opaque = Opaque(number: 1)
    #expect(recorder.values == [1, 1])
  }

  @Test func optionalPropertiesNotifyForNilToo() {
    let model = Draft()
    let recorder = StateRecorder<Int?>()
    recorder.token = model.observe(\.optional) { recorder.record($0) }
    model.optional = 1
    model.optional = nil
    model.optional = nil
    #expect(recorder.values == [1, nil, nil])
  }

  @Test func anInPlaceMutationNotifiesOnceWithTheNewValue() {
    let model = Draft()
    let tags = StateRecorder<[String]>()
    let counts = StateRecorder<Int>()
    tags.token = model.observe(\.tags) { tags.record($0) }
    counts.token = model.observe(\.count) { counts.record($0) }

    model.tags.append("swift")
    model.tags.append("linux")
    model.tags.removeAll()
    model.count += 1
    model.count += 1
    #expect(tags.values == [["swift"], ["swift", "linux"], []])
    #expect(counts.values == [1, 2])
  }

  @Test func aHandlerMayReadAndWriteTheModelDuringAnInPlaceMutation() {
    let model = Draft()
    let log = StateRecorder<String>()
    var tokens = Set<ObservationToken>()
    model.observe(\.tags) { tags in
      // Reading the property and writing another one while the mutation notifies must not be an overlapping access.
      log.record("tags:\(tags) read:\(model.tags)")
      model.count = tags.count
    }
    .store(in: &tokens)
    model.observe(\.count) { log.record("count:\($0)") }.store(in: &tokens)

    model.tags.append("a")
    model.tags += ["b"]
    #expect(
      log.values == [
        #"tags:["a"] read:["a"]"#, "count:1",
        #"tags:["a", "b"] read:["a", "b"]"#, "count:2",
      ])
  }

  @Test func anObserverRegisteredAfterThePropertyWasFirstWrittenStillReceivesItsChanges() {
    let model = Draft()
    // The first write resolves and caches the property's slot before any observer exists.
    model.text = "unobserved"
    model.other = "unobserved"
    let recorder = StateRecorder<String>()
    recorder.token = model.observe(\.text) { recorder.record($0) }
    model.text = "observed"
    model.other = "not this one"
    #expect(recorder.values == ["observed"])
  }

  @Test func propertiesOfTheSameTypeHaveSeparateObservers() {
    let model = Draft()
    let log = StateRecorder<String>()
    var tokens = Set<ObservationToken>()
    model.observe(\.text) { log.record("text:\($0)") }.store(in: &tokens)
    model.observe(\.other) { log.record("other:\($0)") }.store(in: &tokens)
    model.other = "1"
    model.text = "2"
    model.other = "3"
    #expect(log.values == ["other:1", "text:2", "other:3"])
  }

  @Test func eachInstanceLinksItsOwnPropertyToItsOwnRegistry() {
    let first = Draft()
    let second = Draft()
    // Both instances resolve their link on first write; a shared link would send the second's writes to the first.
    first.text = "warm up"
    second.text = "warm up"
    let log = StateRecorder<String>()
    var tokens = Set<ObservationToken>()
    first.observe(\.text) { log.record("first:\($0)") }.store(in: &tokens)
    second.observe(\.text) { log.record("second:\($0)") }.store(in: &tokens)
    second.text = "b"
    first.text = "a"
    #expect(log.values == ["second:b", "first:a"])
  }

  @Test func writingWithoutObserversOnlyStoresTheValue() {
    let model = Draft()
    model.text = "x"
    model.count += 5
    #expect(model.text == "x")
    #expect(model.count == 5)
    #expect(model.observers.observerCount == 0)
  }

  @Test func isSendableWhenItsValueIs() {
    requireSendable(Observed<Int>.self)
    requireSendable(Observed<[String]>.self)
    let wrapper = Observed(wrappedValue: 3)
    let sent: any Sendable = wrapper
    #expect(sent is Observed<Int>)
  }
}

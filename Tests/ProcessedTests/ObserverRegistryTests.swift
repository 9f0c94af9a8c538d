import ProcessedTesting
import Testing

@testable import Processed

@MainActor
private final class Board: ObservableModel {
  let observers = ObserverRegistry()
  @Observed var title = ""
  @Observed var views = 0
  var plain = 0 {
    didSet { notifyObservers(\.plain) }
  }
}

/// Tokens that handlers create or cancel, by name.
@MainActor
private final class TokenTable {
  var tokens: [String: ObservationToken] = [:]

  subscript(name: String) -> ObservationToken? {
    get { tokens[name] }
    set { tokens[name] = newValue }
  }
}

/// Sets its flag when it is deallocated, to show what a registry still holds.
private final class Canary: Sendable {
  let released: LockedBox<Bool>

  init(_ released: LockedBox<Bool>) { self.released = released }

  deinit { released.withLock { $0 = true } }

  func touch() {}
}

@MainActor
@Suite struct ObserverRegistryTests {
  // MARK: Order

  @Test func registrationOrderHoldsAcrossCancellationsAndLaterRegistrations() {
    let model = Board()
    let log = StateRecorder<String>()
    let table = TokenTable()
    for name in ["A", "B", "C"] {
      table[name] = model.observe(\.title) { log.record("\(name):\($0)") }
    }
    table["B"]?.cancel()
    table["D"] = model.observe(\.title) { log.record("D:\($0)") }
    table["B"] = model.observe(\.title) { log.record("B:\($0)") }

    model.title = "x"
    #expect(log.values == ["A:x", "C:x", "D:x", "B:x"])
  }

  @Test func anObserverRegisteredDuringANotificationSeesOnlyLaterChanges() {
    let model = Board()
    let log = StateRecorder<String>()
    let table = TokenTable()
    table["A"] = model.observe(\.title) { value in
      log.record("A:\(value)")
      if table["late"] == nil {
        table["late"] = model.observe(\.title) { log.record("late:\($0)") }
      }
    }
    table["B"] = model.observe(\.title) { log.record("B:\($0)") }

    model.title = "1"
    #expect(log.values == ["A:1", "B:1"])
    model.title = "2"
    #expect(log.values == ["A:1", "B:1", "A:2", "B:2", "late:2"])
  }

  // MARK: Cancelling during a notification

  @Test func aHandlerCancellingALaterObserverStopsItBeforeThatSameChange() {
    let model = Board()
    let log = StateRecorder<String>()
    let table = TokenTable()
    table["A"] = model.observe(\.title) { value in
      log.record("A:\(value)")
      table["B"]?.cancel()
    }
    table["B"] = model.observe(\.title) { log.record("B:\($0)") }
    table["C"] = model.observe(\.title) { log.record("C:\($0)") }

    model.title = "1"
    model.title = "2"
    #expect(log.values == ["A:1", "C:1", "A:2", "C:2"])
    #expect(model.observers.observerCount == 2)
  }

  @Test func aHandlerCancellingAnEarlierObserverStopsItFromTheNextChangeOn() {
    let model = Board()
    let log = StateRecorder<String>()
    let table = TokenTable()
    table["A"] = model.observe(\.title) { log.record("A:\($0)") }
    table["B"] = model.observe(\.title) { value in
      log.record("B:\(value)")
      table["A"]?.cancel()
    }

    model.title = "1"
    model.title = "2"
    #expect(log.values == ["A:1", "B:1", "B:2"])
  }

  @Test func aHandlerCancellingItsOwnTokenIsNotCalledForTheNextChange() {
    let model = Board()
    let log = StateRecorder<String>()
    let table = TokenTable()
    table["A"] = model.observe(\.title) { value in
      log.record("A:\(value)")
      table["A"]?.cancel()
    }
    table["B"] = model.observe(\.title) { log.record("B:\($0)") }

    model.title = "1"
    model.title = "2"
    #expect(log.values == ["A:1", "B:1", "B:2"])
    #expect(model.observers.observerCount == 1)
  }

  @Test func aHandlerCancellingEveryObserverEndsTheNotification() {
    let model = Board()
    let log = StateRecorder<String>()
    let table = TokenTable()
    for name in ["A", "B", "C"] {
      table[name] = model.observe(\.title) { value in
        log.record("\(name):\(value)")
        for token in table.tokens.values { token.cancel() }
      }
    }

    model.title = "1"
    model.title = "2"
    #expect(log.values == ["A:1"])
    #expect(model.observers.observerCount == 0)
  }

  // MARK: Re-entrancy

  @Test func aHandlerWritingAnotherPropertyDeliversThatChangeInline() {
    let model = Board()
    let log = StateRecorder<String>()
    let table = TokenTable()
    table["T1"] = model.observe(\.title) { value in
      log.record("T1:\(value)")
      model.views = value.count
    }
    table["T2"] = model.observe(\.title) { log.record("T2:\($0)") }
    table["V"] = model.observe(\.views) { log.record("V:\($0)") }

    model.title = "abc"
    #expect(log.values == ["T1:abc", "V:3", "T2:abc"])
  }

  @Test func handlersThatWriteAddAndCancelObserversNeverDeadlock() {
    let model = Board()
    let log = StateRecorder<String>()
    let table = TokenTable()
    table["T1"] = model.observe(\.title) { value in
      log.record("T1:\(value)")
      table["V2"]?.cancel()
      table["N"] = model.observe(\.plain) { log.record("N:\($0)") }
      model.views += 1
    }
    table["T2"] = model.observe(\.title) { log.record("T2:\($0)") }
    table["V1"] = model.observe(\.views) { value in
      log.record("V1:\(value)")
      model.plain = value * 10
    }
    table["V2"] = model.observe(\.views) { log.record("V2:\($0)") }

    model.title = "go"
    #expect(log.values == ["T1:go", "V1:1", "N:10", "T2:go"])
    // T1, T2, V1 and N; V2 is gone.
    #expect(model.observers.observerCount == 4)

    // T1 replaces N: the replaced token is released, which cancels it, so only the new N hears plain.
    model.title = "again"
    #expect(
      log.values == [
        "T1:go", "V1:1", "N:10", "T2:go",
        "T1:again", "V1:2", "N:20", "T2:again",
      ])
    #expect(model.observers.observerCount == 4)
  }

  /// A handler that writes the property it observes starts a nested notification. Observers after it must still
  /// see the two changes in the order they were made — otherwise the last value they see is not the current one.
  @Test func aHandlerWritingTheSamePropertyKeepsEveryObserverInOrder() {
    let model = Board()
    let first = StateRecorder<Int>()
    let second = StateRecorder<Int>()
    first.token = model.observe(\.views) { value in
      first.record(value)
      if value == 1 { model.views = 2 }
    }
    second.token = model.observe(\.views) { second.record($0) }

    model.views = 1
    #expect(model.views == 2)
    #expect(first.values == [1, 2])
    #expect(second.values == [1, 2])
    #expect(second.values.last == model.views)
  }

  // MARK: Leftovers and lifetime

  @Test func observerCountDropsBackToZeroOnceEveryTokenIsCancelledOrReleased() {
    let model = Board()
    let log = StateRecorder<String>()
    #expect(model.observers.observerCount == 0)

    let cancelled = model.observe(\.title) { log.record("cancelled:\($0)") }
    var released: ObservationToken? = model.observe(\.views) { log.record("released:\($0)") }
    var stored = Set<ObservationToken>()
    model.observe(\.plain) { log.record("stored:\($0)") }.store(in: &stored)
    model.observe(\.title) { log.record("stored:\($0)") }.store(in: &stored)
    let table = TokenTable()
    table["self"] = model.observe(\.views) { value in
      log.record("self:\(value)")
      table["self"]?.cancel()
    }
    #expect(model.observers.observerCount == 5)

    cancelled.cancel()
    #expect(model.observers.observerCount == 4)
    model.views = 1
    #expect(model.observers.observerCount == 3)
    released = nil
    #expect(model.observers.observerCount == 2)
    stored.removeAll()
    #expect(model.observers.observerCount == 0)

    model.title = "t"
    model.views = 2
    model.plain = 3
    #expect(log.values == ["released:1", "self:1"])
    #expect(released == nil)
  }

  @Test func deallocatingTheModelReleasesEveryHandlerEvenWhileTokensAreHeld() {
    let released = LockedBox(false)
    var canary: Canary? = Canary(released)
    var model: Board? = Board()
    weak let weakRegistry = model?.observers
    let token = model!.observe(\.title) { [canary] _ in canary?.touch() }
    canary = nil
    #expect(released.withLock { $0 } == false)

    model = nil
    #expect(weakRegistry == nil)
    #expect(released.withLock { $0 } == true)
    token.cancel()
    token.cancel()
  }

  @Test func theEndOfARegistryRunsTheEndHooksOfObserversStillRegisteredOnly() {
    let ended = LockedBox<[String]>([])
    var registry: ObserverRegistry? = ObserverRegistry()
    let slot = registry!.slot(for: \Board.title, of: String.self)
    let kept = registry!.addObserver(to: slot, onRegistryEnd: { ended.withLock { $0.append("kept") } }) { (_: String) in
    }
    let cancelled = registry!.addObserver(to: slot, onRegistryEnd: { ended.withLock { $0.append("cancelled") } }) {
      (_: String) in
    }
    cancelled.cancel()
    #expect(ended.withLock { $0 }.isEmpty)

    registry = nil
    #expect(ended.withLock { $0 } == ["kept"])
    kept.cancel()
    #expect(ended.withLock { $0 } == ["kept"])
  }

  // MARK: Slots and direct use

  @Test func aKeyPathResolvesToOneSlotAndOtherKeyPathsToOthers() {
    let registry = ObserverRegistry()
    let title = registry.slot(for: \Board.title, of: String.self)
    let titleAgain = registry.slot(for: \Board.title, of: String.self)
    let views = registry.slot(for: \Board.views, of: Int.self)
    let anonymous = registry.makeAnonymousSlot(of: String.self)
    let anotherAnonymous = registry.makeAnonymousSlot(of: String.self)
    #expect(title === titleAgain)
    #expect(ObjectIdentifier(title) != ObjectIdentifier(views))
    #expect(anonymous !== title)
    #expect(anonymous !== anotherAnonymous)
    #expect(registry.observerCount == 0)
  }

  @Test func notifyingASlotCallsOnlyItsObserversWithTheGivenValue() {
    let registry = ObserverRegistry()
    let title = registry.slot(for: \Board.title, of: String.self)
    let anonymous = registry.makeAnonymousSlot(of: String.self)
    let log = StateRecorder<String>()
    registry.notify(title, "nobody listens")
    let first = registry.addObserver(to: title) { (value: String) in log.record("title:\(value)") }
    let second = registry.addObserver(to: anonymous) { (value: String) in log.record("anonymous:\(value)") }
    #expect(registry.observerCount == 2)

    registry.notify(title, "a")
    registry.notify(anonymous, "b")
    #expect(log.values == ["title:a", "anonymous:b"])
    first.cancel()
    second.cancel()
    registry.notify(title, "c")
    registry.notify(anonymous, "d")
    #expect(log.values == ["title:a", "anonymous:b"])
    #expect(registry.observerCount == 0)
  }

  @Test func aCoalescedWriteReachesEachObserverOnceWhileOtherPropertiesStillNotify() {
    let model = Board()
    let log = StateRecorder<String>()
    var tokens = Set<ObservationToken>()
    model.observe(\.plain) { log.record("plain:\($0)") }.store(in: &tokens)
    model.observe(\.title) { log.record("title:\($0)") }.store(in: &tokens)
    let registry = model.observers
    let slot = registry.slot(for: \Board.plain, of: Int.self)

    // A write that also changes another property of the model.
    let access = KeyPathAccess<Board, Int>(apply: { model, state, mode in
      if mode != .read {
        model.plain = state!
        model.title = "inside"
      }
      state = model.plain
      return 0
    })
    registry.keyPathWrite(in: slot, 5, of: model, through: access)
    #expect(log.values == ["title:inside", "plain:5"])
    model.plain = 6
    #expect(log.values == ["title:inside", "plain:5", "plain:6"])
  }
}

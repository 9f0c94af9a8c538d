import ProcessedTesting
import Testing

@testable import Processed

/// The slot's fast paths, pinned to observable behaviour: a first observer is kept without an array and moves to one
/// when a second registers; a notification of one observer calls its handler directly; both paths skip observers
/// cancelled during the notification and miss observers added during it.
@MainActor
@Suite struct ObserverSlotTests {
  @Test func observersJoinAndLeaveTheSingleAndListFormsInRegistrationOrder() {
    let state = Loadable<Int>()
    let log = StateRecorder<String>()
    let first = state.projectedValue.observe { log.record("first:\($0.data ?? -1)") }
    state.wrappedValue = .loaded(1)
    let second = state.projectedValue.observe { log.record("second:\($0.data ?? -1)") }
    state.wrappedValue = .loaded(2)
    first.cancel()
    state.wrappedValue = .loaded(3)
    let third = state.projectedValue.observe { log.record("third:\($0.data ?? -1)") }
    state.wrappedValue = .loaded(4)
    second.cancel()
    third.cancel()
    state.wrappedValue = .loaded(5)
    let fourth = state.projectedValue.observe { log.record("fourth:\($0.data ?? -1)") }
    state.wrappedValue = .loaded(6)
    #expect(
      log.values == [
        "first:1", "first:2", "second:2", "second:3", "second:4", "third:4", "fourth:6",
      ])
    #expect(state.storage.ownObserverCount == 1)
    fourth.cancel()
    #expect(state.storage.ownObserverCount == 0)
  }

  @Test func anObserverAddedWhileTheOnlyObserverIsCalledMissesThatChange() {
    let state = Loadable<Int>()
    let log = StateRecorder<String>()
    var tokens: [ObservationToken] = []
    let first = state.projectedValue.observe { value in
      log.record("first:\(value.data ?? -1)")
      if tokens.isEmpty {
        tokens.append(state.projectedValue.observe { log.record("added:\($0.data ?? -1)") })
      }
    }
    state.wrappedValue = .loaded(1)
    state.wrappedValue = .loaded(2)
    #expect(log.values == ["first:1", "first:2", "added:2"])
    withExtendedLifetime((first, tokens)) {}
  }

  @Test func aHandlerCancellingALaterObserverKeepsItFromThatChange() {
    let state = Loadable<Int>()
    let log = StateRecorder<String>()
    var later: ObservationToken?
    let first = state.projectedValue.observe { value in
      log.record("first:\(value.data ?? -1)")
      later?.cancel()
    }
    later = state.projectedValue.observe { log.record("later:\($0.data ?? -1)") }
    state.wrappedValue = .loaded(1)
    state.wrappedValue = .loaded(2)
    #expect(log.values == ["first:1", "first:2"])
    withExtendedLifetime(first) {}
  }

  @Test func theOnlyObserverReleasingItsOwnTokenFromItsHandlerIsCalledOnce() {
    let state = Loadable<Int>()
    let log = StateRecorder<Int>()
    var token: ObservationToken?
    token = state.projectedValue.observe { value in
      log.record(value.data ?? -1)
      token = nil
    }
    state.wrappedValue = .loaded(1)
    state.wrappedValue = .loaded(2)
    #expect(log.values == [1])
    #expect(token == nil)
  }

  @Test func aWrappersObserversEndWithItsStorageAndTheirTokensStayValid() async {
    var state: Loadable<Int>? = Loadable<Int>()
    let calls = StateRecorder<Int>()
    let token = state!.projectedValue.observe { calls.record($0.data ?? -1) }
    var iterator = state!.projectedValue.states.makeAsyncIterator()
    #expect(await iterator.next() == .absent)
    state = nil
    // The storage closed its slot: the sequence ends and the token cancels nothing.
    #expect(await iterator.next() == nil)
    token.cancel()
    token.cancel()
    #expect(calls.values.isEmpty)
  }

  @Test func observerIdsAreUniqueAcrossSlots() {
    let one = Loadable<Int>()
    let two = Loadable<Int>()
    let log = StateRecorder<String>()
    let a = one.projectedValue.observe { _ in log.record("a") }
    let b = two.projectedValue.observe { _ in log.record("b") }
    // Cancelling a token of one slot never removes an observer of another, whatever ids they were given.
    a.cancel()
    one.wrappedValue = .loaded(1)
    two.wrappedValue = .loaded(1)
    #expect(log.values == ["b"])
    withExtendedLifetime(b) {}
  }
}

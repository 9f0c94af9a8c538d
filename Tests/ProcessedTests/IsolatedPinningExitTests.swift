import Processed
import Testing

@testable import Processed

/// Pinning an actor-owned state to its first actor, at run time: a use from another actor stops the program with a
/// message that names both (exit tests, each in a child process), and the owner itself may use it as often as it likes.
///
/// The compiler keeps an `@IsolatedLoadable` inside its actor (the wrapper and controller are not `Sendable`; see
/// .ci/compile-fails). These tests get past it on purpose with an `@unchecked Sendable` box, to reach the run-time
/// check behind it.
@Suite struct IsolatedPinningExitTests {
  @Test func aSecondInstanceOfTheSameActorTypeStopsTheProgramNamingBoth() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let box = PinnedBox()
      let first = PinningOwner()
      let second = PinningOwner()
      await first.cancel(box)  // pins the state to `first`
      await second.cancel(box)
      withExtendedLifetime(first) {}
    }
    guard let result else { return }
    let message = String(decoding: result.standardErrorContent, as: UTF8.self)
    #expect(message.contains("Processed: this IsolatedLoadable<Int> belongs to PinningOwner ("))
    #expect(message.contains("and was used from PinningOwner ("))
    #expect(message.contains("an actor-owned state is used only by the actor that first used it"))
    // Two instances of one type: the message tells them apart by their identifiers.
    let identifiers = message.matches(of: /ObjectIdentifier\(0x[0-9a-f]+\)/).map { String($0.output) }
    #expect(Set(identifiers).count == 2)
  }

  @Test func anotherActorTypeStopsTheProgramNamingBothTypes() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let box = PinnedBox()
      let owner = PinningOwner()
      await owner.observe(box)  // pins the state to `owner`
      await PinningIntruder().load(box)
      withExtendedLifetime(owner) {}
    }
    guard let result else { return }
    let message = String(decoding: result.standardErrorContent, as: UTF8.self)
    #expect(message.contains("belongs to PinningOwner ("))
    #expect(message.contains("was used from PinningIntruder ("))
  }

  @Test func readingTheWrappedValueFromAnotherActorAfterPinningStopsTheProgram() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let box = PinnedBox()
      let owner = PinningOwner()
      await owner.cancel(box)  // pins the state to `owner`
      _ = await PinningIntruder().read(box)
      withExtendedLifetime(owner) {}  // the storage holds its owner weakly: keep it alive past the read
    }
    guard let result else { return }
    let message = String(decoding: result.standardErrorContent, as: UTF8.self)
    // What stops it: the runtime's own check of the owner's executor, which names the owner's type.
    #expect(message.contains("Incorrect actor executor assumption"))
    #expect(message.contains("PinningOwner"))
    // What stops the program is the runtime's own executor check inside `preconditionIsolated(_:)`, which names the
    // owner's type; the library's longer message is not printed on Swift 6.3 / Linux (documented on the wrappers).
  }

  @Test func anotherInstanceOnTheSameExecutorStopsTheProgram() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let box = PinnedBox()
      let executor = QueueExecutor("shared")
      let first = SharingOwner(executor)
      let second = SharingOwner(executor)
      await first.cancel(box)  // pins the state to `first`
      await second.cancel(box)  // the same executor, another instance
      withExtendedLifetime(first) {}
    }
    guard let result else { return }
    let message = String(decoding: result.standardErrorContent, as: UTF8.self)
    #expect(message.contains("belongs to SharingOwner ("))
    #expect(message.contains("was used from SharingOwner ("))
  }

  @Test func theOwnerUsesItsStateManyTimesWithoutTrippingThePin() async {
    let owner = PinningOwner()
    let box = PinnedBox()
    for round in 0..<500 {
      await owner.cancel(box)
      await owner.load(box, round)
      #expect(await owner.read(box) == .loaded(round))
    }
    await owner.observe(box)
    #expect(box.feed.storage.ownerID == ObjectIdentifier(owner))

    // The owner's own `@IsolatedLoadable` property, through every kind of call.
    let (history, final) = await owner.churn(rounds: 500)
    #expect(final == .loaded(499))
    #expect(history == (0..<500).flatMap { round in [.loaded(-1), .loading, .loaded(round)] })
  }
}

/// A standalone actor-owned state, handed between actors on purpose.
private final class PinnedBox: @unchecked Sendable {
  let feed = IsolatedLoadable<Int>()
}

private actor PinningOwner {
  @IsolatedLoadable var feed: LoadableState<Int> = .absent
  var history: [LoadableState<Int>] = []
  var tokens: [ObservationToken] = []

  func cancel(_ box: PinnedBox) {
    box.feed.projectedValue.cancel()
  }

  func observe(_ box: PinnedBox) {
    tokens.append(box.feed.projectedValue.observe { _ in })
  }

  func load(_ box: PinnedBox, _ value: Int) async {
    await box.feed.projectedValue.load { value }
  }

  func read(_ box: PinnedBox) -> LoadableState<Int> {
    box.feed.wrappedValue
  }

  /// Loads, cancels, refreshes, observes, reads and writes its own state `rounds` times; returns what its observer saw
  /// and the final state.
  func churn(rounds: Int) async -> ([LoadableState<Int>], LoadableState<Int>) {
    let token = $feed.observe { state in self.history.append(state) }
    // Cancelled before returning: the observer captures the actor, and a token the actor kept would keep it alive.
    defer { token.cancel() }
    for round in 0..<rounds {
      $feed.cancel()
      feed = .loaded(-1)
      await $feed.load { round }
      _ = $feed.state
      _ = $feed.activity
    }
    return (history, feed)
  }
}

private actor PinningIntruder {
  func load(_ box: PinnedBox) async {
    await box.feed.projectedValue.load { 1 }
  }

  func read(_ box: PinnedBox) -> LoadableState<Int> {
    box.feed.wrappedValue
  }
}

/// Actors that share one serial executor: the pin is the instance, not the executor.
private actor SharingOwner {
  let executor: QueueExecutor
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

  init(_ executor: QueueExecutor) { self.executor = executor }

  func cancel(_ box: PinnedBox) {
    box.feed.projectedValue.cancel()
  }
}

import ProcessedTesting
import Testing

@testable import Processed

/// `OverlapPolicy.joinRunning`: a call made while a load is in progress starts nothing and ends with that load.
@MainActor
@Suite struct JoinRunningTests {
  let join = LoadOptions(overlap: .joinRunning)

  @Test func aDoubleTappedSaveRunsOnce() async {
    let model = PolicyModel()
    let history = StateRecorder(model.$save)
    let gate = Gate()
    var runs = 0
    let first: Task<Void, Never> = model.$save.run(options: join) {
      runs += 1
      await gate.wait()
    }
    let second: Task<Void, Never> = model.$save.run(options: join) {
      runs += 1
    }
    #expect(history.values.count == 1)  // .running, written once
    gate.open()
    await second.value  // ends when the first run ends
    #expect(model.save.hasFinished)
    await first.value
    #expect(runs == 1)
    #expect(history.values.count == 2)
  }

  @Test func anAsyncJoiningCallReturnsWhenTheLoadInProgressEnds() async throws {
    let model = PolicyModel()
    let gate = Gate()
    var ran: [Int] = []
    let first: Task<Void, Never> = model.$results.load(options: join) {
      ran.append(1)
      await gate.wait()
      return 1
    }
    let joined = Task {
      await model.$results.load(options: join) {
        ran.append(2)
        return 2
      }
      return model.results
    }
    await gate.untilWaiting(1)
    gate.open()
    #expect(await joined.value == .loaded(1))
    await first.value
    #expect(ran == [1])
  }

  @Test func withNoLoadInProgressTheCallStarts() async {
    let model = PolicyModel()
    await model.$results.load(options: join) { 1 }
    await model.$results.load(options: join) { 2 }
    #expect(model.results == .loaded(2))
    await model.load(\.keyPathResults, options: join) { 3 }
    #expect(model.keyPathResults == .loaded(3))
  }

  @Test func cancellingAJoiningCallEndsItAndLeavesTheLoadRunning() async {
    let model = PolicyModel()
    let gate = Gate()
    let first: Task<Void, Never> = model.load(\.keyPathResults, options: join) {
      await gate.wait()
      return 1
    }
    let joining: Task<Void, Never> = model.load(\.keyPathResults, options: join) { 2 }
    joining.cancel()
    await joining.value  // returns although the load runs on
    #expect(model.keyPathResults == .loading)
    gate.open()
    await first.value
    #expect(model.keyPathResults == .loaded(1))
  }

  @Test func aCallJoinsALoadInAnyPhase() async throws {
    let clock = TestClock()
    let model = PolicyModel()
    var ran: [Int] = []
    let options = LoadOptions(debounce: .trailing(.seconds(1)), overlap: .joinRunning, clock: clock)
    let first: Task<Void, Never> = model.$results.load(options: options) {
      ran.append(1)
      return 1
    }
    try await clock.waitForSleepers(1)
    let joining: Task<Void, Never> = model.$results.load(options: options) {
      ran.append(2)
      return 2
    }
    #expect(clock.sleeperCount == 1)  // no new debounce started
    clock.advance(by: .seconds(1))
    await joining.value
    await first.value
    #expect(ran == [1])
    #expect(model.results == .loaded(1))
  }

  @Test(arguments: ["cancel", "reset", "manual write", "newer load"])
  func aJoiningCallEndsWhenTheLoadItJoinedStopsEvenIfItsBlockRunsOn(_ how: String) async {
    let model = PolicyModel()
    let gate = Gate()
    let first: Task<Void, Never> = model.$results.load(options: join) {
      await gate.wait()  // ignores cancellation
      return 1
    }
    // Fired as the joining call is made, which registers it as a joiner in the same turn of the main actor (the
    // call neither writes nor changes the activity, so nothing else reports it).
    let joining = Signal()
    let joined = Task {
      joining.fire()
      await model.$results.load(options: join) { 2 }
    }
    await until(.signal(joining)) { model.$results.storage.tracker.joiners.count == 1 }
    switch how {
    case "cancel": model.$results.cancel()
    case "reset": model.$results.reset()
    case "manual write": model.results = .loaded(5)
    default: let _: Task<Void, Never> = model.$results.load { 3 }
    }
    await joined.value  // returns although the first block still waits on its gate
    #expect(gate.waiting == 1)
    gate.open()
    await first.value
    #expect(model.results != .loaded(1) && model.results != .loaded(2))
  }

  @Test func aJoiningCallEndsWhenTheWrapperItJoinedGoesAway() async {
    var state: Loadable<Int>? = Loadable<Int>()
    let gate = Gate()
    let first: Task<Void, Never> = state!.projectedValue.load(options: join) {
      await gate.wait()
      return 1
    }
    let joining: Task<Void, Never> = state!.projectedValue.load(options: join) { 2 }
    state = nil  // the storage's deinit cancels the load
    await joining.value  // returns although the first block still waits on its gate
    #expect(gate.waiting == 1)
    gate.open()
    await first.value
  }

  @Test func aCallWithoutJoinSupersedes() async {
    let model = PolicyModel()
    let gate = Gate()
    let first: Task<Void, Never> = model.$results.load(options: join) {
      await gate.wait()
      return 1
    }
    await model.$results.load { 2 }  // .cancelRunning: latest wins
    gate.open()
    await first.value
    #expect(model.results == .loaded(2))
  }
}

import ProcessedTesting
import Testing

@testable import Processed

/// `Debounce.trailing` and `.leading`, on a TestClock.
@MainActor
@Suite struct DebounceTests {
  let clock = TestClock()

  func trailing(_ milliseconds: Int = 300) -> LoadOptions {
    LoadOptions(debounce: .trailing(.milliseconds(milliseconds)), clock: clock)
  }

  func leading(_ milliseconds: Int = 300) -> LoadOptions {
    LoadOptions(debounce: .leading(.milliseconds(milliseconds)), clock: clock)
  }

  @Test func aLeadingDebounceCountsOrdinaryLoadCallsAfterTheStatesFirstDebouncedOne() async throws {
    let model = PolicyModel()
    await model.$results.load(options: leading(1_000)) { 1 }  // the first call: at once
    clock.advance(by: .seconds(2))
    await model.$results.load(options: LoadOptions(clock: clock)) { 2 }  // an ordinary call, timed now
    clock.advance(by: .milliseconds(500))
    var runs = 0
    let task: Task<Void, Never> = model.$results.load(options: leading(1_000)) {
      runs += 1
      return 3
    }
    #expect(model.$results.activity.phase == .debouncing)  // the ordinary call was 0.5 s ago
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    await task.value
    #expect(runs == 1)
    #expect(model.results == .loaded(3))
  }

  @Test func aTrailingLoadWritesNothingWhileWaitingAndANewerCallReplacesIt() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    var ran: [Int] = []
    var tasks: [Task<Void, Never>] = []
    for query in 1...3 {
      tasks.append(
        model.$results.load(options: trailing()) {
          ran.append(query)
          return query
        })
    }
    // The replaced calls' tasks end without running their blocks.
    await tasks[0].value
    await tasks[1].value
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(299))
    #expect(history.values.isEmpty)  // no .loading flicker while typing
    #expect(ran.isEmpty)
    clock.advance(by: .milliseconds(1))
    await tasks[2].value
    #expect(ran == [3])
    #expect(history.values == [.loading, .loaded(3)])
    #expect(clock.sleeperCount == 0)
  }

  @Test func aReplacedAsyncCallerReturns() async throws {
    let model = PolicyModel()
    var ran: [Int] = []
    let options = trailing()
    let first = Task {
      await model.$results.load(options: options) {
        ran.append(1)
        return 1
      }
    }
    try await clock.waitForSleepers(1)
    let second: Task<Void, Never> = model.$results.load(options: options) {
      ran.append(2)
      return 2
    }
    await first.value  // returned: its load was replaced
    #expect(ran.isEmpty)
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(300))
    await second.value
    #expect(ran == [2])
    #expect(model.results == .loaded(2))
  }

  @Test(arguments: ["cancel", "reset", "manual write", "task cancelled", "caller cancelled"])
  func aWaitingLoadIsDropped(_ how: String) async throws {
    let model = PolicyModel()
    model.results = .loaded(0)
    let history = StateRecorder(model.$results)
    var ran = false
    let options = trailing()
    let task: Task<Void, Never>
    if how == "caller cancelled" {
      task = Task {
        await model.$results.load(options: options) {
          ran = true
          return 1
        }
      }
    } else {
      task = model.$results.load(options: options) {
        ran = true
        return 1
      }
    }
    try await clock.waitForSleepers(1)
    switch how {
    case "cancel": model.$results.cancel()
    case "reset": model.$results.reset()
    case "manual write": model.results = .loaded(5)
    default: task.cancel()
    }
    await task.value
    #expect(clock.sleeperCount == 0)
    clock.advance(by: .seconds(10))
    #expect(!ran)
    let expected: [LoadableState<Int>] =
      switch how {
      case "reset": [.absent]
      case "manual write": [.loaded(5)]
      default: []
      }
    #expect(history.values == expected)
  }

  @Test func aLeadingLoadStartsAtOnceThenDebouncesCallsWithinItsDuration() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model.$results)
    var ran: [Int] = []
    let options = leading()
    let first: Task<Void, Never> = model.$results.load(options: options) {
      ran.append(1)
      return 1
    }
    #expect(history.values == [.loading])  // at once
    await first.value
    #expect(ran == [1])
    clock.advance(by: .milliseconds(100))
    // Within 300 ms of the last call: waits like .trailing, writing nothing.
    let second: Task<Void, Never> = model.$results.load(options: options) {
      ran.append(2)
      return 2
    }
    #expect(history.values == [.loading, .loaded(1)])
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(300))
    await second.value
    #expect(ran == [1, 2])
    // 300 ms after the last call: at once again.
    let third: Task<Void, Never> = model.$results.load(options: options) {
      ran.append(3)
      return 3
    }
    #expect(model.results == .loading)
    await third.value
    #expect(ran == [1, 2, 3])
    #expect(history.values == [.loading, .loaded(1), .loading, .loaded(2), .loading, .loaded(3)])
  }

  @Test func aDebouncedCallSupersedesTheRunningLoadAtOnce() async throws {
    let model = PolicyModel()
    let gate = Gate()
    let running: Task<Void, Never> = model.$results.load {
      await gate.wait()
      return 1
    }
    let debounced: Task<Void, Never> = model.$results.load(options: trailing()) { 2 }
    gate.open()
    await running.value
    #expect(model.results == .loading)  // the superseded load never wrote
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(300))
    await debounced.value
    #expect(model.results == .loaded(2))
  }

  @Test(arguments: [Duration.zero, .milliseconds(-5), .seconds(Int64.min)])
  func aZeroOrNegativeDebounceStartsAtOnce(_ delay: Duration) async {
    for debounce in [Debounce.trailing(delay), .leading(delay)] {
      let model = PolicyModel()
      let task: Task<Void, Never> = model.$results.load(options: LoadOptions(debounce: debounce, clock: clock)) { 1 }
      #expect(model.results == .loading)
      await task.value
      #expect(model.results == .loaded(1))
    }
    #expect(clock.sleeperCount == 0)
  }

  @Test func aSilentDebouncedLoadWritesNoStartState() async throws {
    let model = PolicyModel()
    model.results = .loaded(1)
    let history = StateRecorder(model.$results)
    let task: Task<Void, Never> = model.$results.load(silently: true, options: trailing()) { 2 }
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(300))
    await task.value
    #expect(history.values == [.loaded(2)])
  }

  @Test func keyPathStatesAndProcessesAreDebouncedToo() async throws {
    let model = PolicyModel()
    let history = StateRecorder(model, \.keyPathResults)
    let saves = StateRecorder(model, \.keyPathSave)
    var ran: [String] = []
    let options = trailing()
    let _: Task<Void, Never> = model.load(\.keyPathResults, options: options) {
      ran.append("a")
      return 1
    }
    let _: Task<Void, Never> = model.run(\.keyPathSave, options: options) { ran.append("save 1") }
    let load: Task<Void, Never> = model.load(\.keyPathResults, options: options) {
      ran.append("b")
      return 2
    }
    let run: Task<Void, Never> = model.run(\.keyPathSave, options: options) { ran.append("save 2") }
    try await clock.waitForSleepers(2)
    #expect(history.values.isEmpty && saves.values.isEmpty)
    clock.advance(by: .milliseconds(300))
    await load.value
    await run.value
    #expect(Set(ran) == ["b", "save 2"])
    #expect(history.values == [.loading, .loaded(2)])
    #expect(saves.values.count == 2 && saves.values.last?.hasFinished == true)
  }

  @Test func aKeyPathStateRemembersItsLastCallAfterItsLoadEndedButNotItsModel() async throws {
    var model: PolicyModel? = PolicyModel()
    weak let released = model
    let options = leading()
    await model!.load(\.keyPathResults, options: options) { 1 }
    // Within the duration of the last call: debounced, although no load runs.
    let second: Task<Void, Never> = model!.load(\.keyPathResults, options: options) { 2 }
    #expect(model!.keyPathResults == .loaded(1))
    try await clock.waitForSleepers(1)
    clock.advance(by: .milliseconds(300))
    await second.value
    #expect(model!.keyPathResults == .loaded(2))
    model = nil
    #expect(released == nil)  // the call's mark does not keep the model alive
  }
}

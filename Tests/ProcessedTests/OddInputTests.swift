import ProcessedTesting
import Testing

@testable import Processed

// Odd input: interrupt delays that are zero, negative, the most negative, the longest a `Duration` of seconds can
// hold and beyond it, very long interrupt lists, control calls when nothing runs, `states` sequences that are never
// iterated, very many observers, and tokens cancelled from inside their own handlers. Each has a defined outcome
// (see `Documentation/Reliability.md`); none may hang or crash.

/// A model whose loads capture it strongly (blocks and `onInterrupt` alike), so that a test can see whether
/// anything the library keeps — the load's task or its interrupt task — still holds it after the load ended.
@MainActor
final class OddInputModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  @Loadable var wrapped: LoadableState<Int>
  var plain: LoadableState<Int> = .absent
  @Process var save
  var action: SingleProcessState = .idle
  var interrupts: [Duration] = []
  /// Fired when the model is freed (from whichever thread releases it last), for a test that waits for it.
  let freed = Signal()

  deinit { freed.fire() }
}

/// Interrupt lists no caller should write, and the accumulated delays `onInterrupt` receives for each before the
/// block returns.
enum OddInterrupts: String, CaseIterable, Sendable, CustomTestStringConvertible {
  /// `[.zero]`: fires once, at once, with `.zero`.
  case zero
  /// `[-5 ms]`: fires once, at once, and adds nothing.
  case negative
  /// `[.seconds(Int64.min)]`: the most negative whole-second delay; fires at once, adds nothing.
  case mostNegative
  /// `[.seconds(Int64.max)]`: about 292 billion years; never fires, and the load still ends when its block returns.
  case longest
  /// A delay beyond `.seconds(Int64.max)`: capped there; never fires.
  case beyondLongest
  /// `[.seconds(Int64.max), .seconds(Int64.max)]`: never fires (and the sum does not overflow).
  case twoLongest
  /// `[.seconds(Int64.max), .zero]`: delays run one after another, so the zero after a never-ending delay never
  /// fires either.
  case zeroAfterLongest
  /// `[0, 1 ms, -1 ms, 0, 2 ms, .seconds(Int64.max), 0]`: fires five times with 0, 1, 1, 1, 3 ms, then never again.
  case mixed

  var testDescription: String { rawValue }

  var delays: [Duration] {
    switch self {
    case .zero: [.zero]
    case .negative: [.milliseconds(-5)]
    case .mostNegative: [.seconds(Int64.min)]
    case .longest: [.seconds(Int64.max)]
    case .beyondLongest: [Duration(secondsComponent: .max, attosecondsComponent: 999_999_999_999_999_999)]
    case .twoLongest: [.seconds(Int64.max), .seconds(Int64.max)]
    case .zeroAfterLongest: [.seconds(Int64.max), .zero]
    case .mixed: [.zero, .milliseconds(1), .milliseconds(-1), .zero, .milliseconds(2), .seconds(Int64.max), .zero]
    }
  }

  /// Whether the interrupt task ends up asleep in a delay that never ends (rather than done with its list).
  var endsAsleep: Bool {
    switch self {
    case .zero, .negative, .mostNegative: false
    case .longest, .beyondLongest, .twoLongest, .zeroAfterLongest, .mixed: true
    }
  }

  var expected: [Duration] {
    switch self {
    case .zero, .negative, .mostNegative: [.zero]
    case .longest, .beyondLongest, .twoLongest, .zeroAfterLongest: []
    case .mixed: [.zero, .milliseconds(1), .milliseconds(1), .milliseconds(1), .milliseconds(3)]
    }
  }
}

/// The two ways to load with interrupts that odd-input tests compare.
enum InterruptForm: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case wrapper
  case keyPath

  var testDescription: String { rawValue }
}

@MainActor
@Suite struct OddInputTests {
  // MARK: Interrupt delays

  /// Each odd interrupt list: the calls `onInterrupt` receives before the block returns are exactly the expected
  /// ones (none for a delay that never ends), the load still ends normally when its block returns, and once it has
  /// ended nothing — not the interrupt task sleeping through a delay of billions of years — keeps the model alive.
  @Test(arguments: OddInterrupts.allCases, InterruptForm.allCases)
  func oddInterruptDelaysHaveDefinedOutcomes(_ interrupts: OddInterrupts, _ form: InterruptForm) async throws {
    let clock = TestClock()
    let options = LoadOptions(clock: clock)
    var model: OddInputModel? = OddInputModel()
    weak let weakModel = model
    let history: StateRecorder<LoadableState<Int>>
    let gate = Gate()
    let expectedCalls = interrupts.expected.count
    let enoughCalls = WrapperLatch<Void>()
    if expectedCalls == 0 { enoughCalls.fulfil() }
    let task: Task<Void, Never>
    switch form {
    case .wrapper:
      history = StateRecorder(model!, \.wrapped)
      task = model!.$wrapped.load(options: options, interrupts: interrupts.delays) { [model] in
        await gate.wait()
        return model!.interrupts.count
      } onInterrupt: { [model] delay in
        model!.interrupts.append(delay)
        if model!.interrupts.count == expectedCalls { enoughCalls.fulfil() }
      }
    case .keyPath:
      history = StateRecorder(model!, \.plain)
      task = model!.load(\.plain, options: options, interrupts: interrupts.delays) { [model] in
        await gate.wait()
        return model!.interrupts.count
      } onInterrupt: { [model] delay in
        model!.interrupts.append(delay)
        if model!.interrupts.count == expectedCalls { enoughCalls.fulfil() }
      }
    }
    // Time moves a millisecond at a time through the positive delays (`.mixed`: 1 ms, then 2 ms).
    for _ in 0..<(interrupts == .mixed ? 3 : 0) {
      try await clock.waitForSleepers(1)
      clock.advance(by: .milliseconds(1))
    }
    await enoughCalls.value()
    if interrupts.endsAsleep {
      // The interrupt task is asleep in its never-ending delay: no extra call can come without time moving on.
      try await clock.waitForSleepers(1)
      clock.advance(by: .seconds(86_400 * 365 * 1_000))
      try await clock.waitForSleepers(1)
    } else {
      #expect(clock.sleeperCount == 0)  // done with its list
    }
    gate.open()
    await task.value
    #expect(model!.interrupts == interrupts.expected)
    #expect(history.values == [.loading, .loaded(expectedCalls)])
    #expect(!model!.$wrapped.storage.tracker.isRunning)
    #expect(keyPathHostCount(of: model!) == 0)
    let freed = model!.freed
    model = nil
    // The interrupt task ends as soon as it sees its cancellation; it may need one more turn of the main actor.
    await until(.signal(freed)) { weakModel == nil }
    #expect(weakModel == nil, "the ended load's interrupt task keeps the model alive")
  }

  /// The same for a process: `[.seconds(Int64.max)]` never fires, the run finishes when its block returns, and the
  /// model is freed afterwards.
  @Test(arguments: InterruptForm.allCases)
  func longestInterruptNeverFiresForAProcess(_ form: InterruptForm) async throws {
    let clock = TestClock()
    let options = LoadOptions(clock: clock)
    var model: OddInputModel? = OddInputModel()
    weak let weakModel = model
    let gate = Gate()
    let task: Task<Void, Never>
    switch form {
    case .wrapper:
      task = model!.$save.run(options: options, interrupts: [.seconds(Int64.max)]) { [model] in
        _ = model
        await gate.wait()
      } onInterrupt: { [model] delay in
        model!.interrupts.append(delay)
      }
    case .keyPath:
      task = model!.run(\.action, options: options, interrupts: [.seconds(Int64.max)]) { [model] in
        _ = model
        await gate.wait()
      } onInterrupt: { [model] delay in
        model!.interrupts.append(delay)
      }
    }
    try await clock.waitForSleepers(1)  // the interrupt is asleep in its delay
    clock.advance(by: .seconds(86_400 * 365 * 1_000))
    try await clock.waitForSleepers(1)  // and still is, a thousand years later
    gate.open()
    await task.value
    #expect(model!.interrupts == [])
    #expect(form == .wrapper ? model!.save.hasFinished : model!.action.hasFinished)
    let freed = model!.freed
    model = nil
    await until(.signal(freed)) { weakModel == nil }
    #expect(weakModel == nil)
  }

  /// 10 000 zero delays: `onInterrupt` is called exactly 10 000 times, each with `.zero`, all while the block
  /// waits; then the block returns and its value is written.
  @Test(arguments: InterruptForm.allCases)
  func tenThousandZeroDelaysFireTenThousandTimesThenTheBlockCompletes(_ form: InterruptForm) async {
    let model = OddInputModel()
    let count = 10_000
    let history = StateRecorder(model, form == .wrapper ? \.wrapped : \.plain)
    let allFired = WrapperLatch<Void>()
    let delays = Array(repeating: Duration.zero, count: count)
    let onInterrupt: @MainActor (Duration) -> Void = { delay in
      model.interrupts.append(delay)
      if model.interrupts.count == count { allFired.fulfil() }
    }
    let block: @MainActor () async -> Int = {
      await allFired.value()
      return model.interrupts.count
    }
    switch form {
    case .wrapper: await model.$wrapped.load(interrupts: delays, block: block, onInterrupt: onInterrupt)
    case .keyPath: await model.load(\.plain, interrupts: delays, block: block, onInterrupt: onInterrupt)
    }
    #expect(model.interrupts.count == count)
    #expect(model.interrupts.allSatisfy { $0 == .zero })
    #expect(history.values == [.loading, .loaded(count)])
    history.token?.cancel()
  }

  /// A long list whose `onInterrupt` times out at the 5 000th call: exactly 5 000 calls, the error is written, the
  /// remaining delays never fire and the block's later value is dropped.
  @Test(arguments: InterruptForm.allCases)
  func aTimeoutPartWayThroughALongListEndsTheLoad(_ form: InterruptForm) async throws {
    let model = OddInputModel()
    let history = StateRecorder(model, form == .wrapper ? \.wrapped : \.plain)
    let gate = Gate()
    let delays = Array(repeating: Duration.zero, count: 20_000)
    let onInterrupt: @MainActor (Duration) throws -> Void = { delay in
      model.interrupts.append(delay)
      if model.interrupts.count == 5_000 { throw TimeoutError() }
    }
    let block: @MainActor () async -> Int = {
      await gate.wait()
      return 1
    }
    let task: Task<Void, Never> =
      switch form {
      case .wrapper: model.$wrapped.load(interrupts: delays, block: block, onInterrupt: onInterrupt)
      case .keyPath: model.load(\.plain, interrupts: delays, block: block, onInterrupt: onInterrupt)
      }
    try await history.wait(forCount: 2)
    #expect(history.values == [.loading, .error(TimeoutError())])
    // The interrupt list ends with the throw, in the same turn of the main actor: no later call can be pending.
    gate.open()
    await task.value
    #expect(model.interrupts.count == 5_000)
    #expect(history.values == [.loading, .error(TimeoutError())])
    history.token?.cancel()
  }

  // MARK: Control when nothing runs

  /// `cancel()` and `reset()` when no load runs, on every face: `cancel()` never writes; `reset()` writes `.absent`
  /// once from any other state and nothing on an absent state; repeating either changes nothing; nothing is left
  /// tracked.
  @Test(arguments: LoadFaceKind.allCases)
  func cancelAndResetWhenNothingRunsHaveDefinedOutcomes(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let history = face.record()
    face.cancel()
    face.cancel()
    face.reset()
    face.reset()
    #expect(history.values == [])
    // A direct write of a plain property is not observable (only `LoadableSupport` calls on it are).
    face.write(.loaded(1))
    let written: [LoadableState<Int>] = kind.manualWritesNotify ? [.loaded(1)] : []
    face.cancel()
    #expect(face.state() == .loaded(1))
    #expect(history.values == written)
    face.reset()
    face.reset()
    face.cancel()
    #expect(history.values == written + [.absent])
    await face.loadAndWait { 2 }
    face.cancel()
    face.cancel()
    #expect(history.values == written + [.absent, .loading, .loaded(2)])
    face.reset()
    face.reset()
    #expect(history.values == written + [.absent, .loading, .loaded(2), .absent])
    #expect(!face.isRunning())
    history.token?.cancel()
  }

  /// `reset()` of an absent state while a *silent* load runs: the load is cancelled, nothing is written (the state
  /// already is `.absent`), and the load's value never arrives.
  @Test(arguments: LoadFaceKind.allCases)
  func resetOfAnAbsentStateDuringASilentLoadCancelsItAndWritesNothing(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let gate = Gate()
    let task = face.load(silently: true) {
      await gate.wait()
      return 1
    }
    #expect(face.isRunning())
    face.reset()
    #expect(!face.isRunning())
    gate.open()
    await task.value
    #expect(history.values == [])
    #expect(face.state() == .absent)
    history.token?.cancel()
  }

  /// Yielding the state the load already has writes it again: every `yield` is a write (B3), including
  /// `.loading` during a load and a repeated value.
  @Test(arguments: LoadFaceKind.allCases)
  func yieldingTheCurrentStateWritesItAgain(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let task = face.loadYielding { yield in
      yield(.loading)
      yield(.loaded(1))
      yield(.loaded(1))
    }
    await task.value
    #expect(history.values == [.loading, .loading, .loaded(1), .loaded(1)])
    history.token?.cancel()
  }

  // MARK: States sequences that are never iterated

  /// A `states` sequence created and dropped without iterating registers one observer while it exists and none
  /// afterwards, for loads and processes alike; so does one whose iterator was made but never advanced.
  @Test func statesSequenceDroppedWithoutIteratingLeavesNoObserver() {
    let count = Loadable<Int>()
    @Process var save
    do {
      let states = count.projectedValue.states
      let runs = $save.states
      withExtendedLifetime((states, runs)) {
        #expect(count.storage.ownObserverCount == 1)
        #expect($save.storage.ownObserverCount == 1)
      }
    }
    #expect(count.storage.ownObserverCount == 0)
    #expect($save.storage.ownObserverCount == 0)
    do {
      let iterator = count.projectedValue.states.makeAsyncIterator()
      withExtendedLifetime(iterator) {
        #expect(count.storage.ownObserverCount == 1)
      }
    }
    #expect(count.storage.ownObserverCount == 0)
    for _ in 0..<1_000 { _ = count.projectedValue.states }
    #expect(count.storage.ownObserverCount == 0)
  }

  /// A wrapper released while an un-iterated `states` sequence is still held: the storage is freed (the sequence
  /// does not keep it), and the sequence then ends at once after the current state it captured.
  @Test func statesSequenceHeldPastItsWrapperDoesNotKeepTheWrapperAlive() async {
    var count: Loadable<Int>? = Loadable(wrappedValue: .loaded(7))
    weak let weakStorage = count!.storage
    let states = count!.projectedValue.states
    count = nil
    #expect(weakStorage == nil, "an un-iterated states sequence keeps the wrapper's storage alive")
    var seen: [LoadableState<Int>] = []
    for await state in states { seen.append(state) }
    #expect(seen == [.loaded(7)])
  }

  // MARK: Very many observers

  /// 10 000 observers of one wrapper state: each change reaches every one of them exactly once, in registration
  /// order; cancelling them all leaves none.
  @Test func tenThousandObserversOfAWrapperAreEachCalledOnceInOrder() async {
    let count = Loadable<Int>()
    let observers = 10_000
    var calls: [Int] = []
    var states: [LoadableState<Int>] = []
    var tokens: [ObservationToken] = []
    calls.reserveCapacity(2 * observers)
    for index in 0..<observers {
      tokens.append(
        count.projectedValue.observe { state in
          calls.append(index)
          states.append(state)
        })
    }
    #expect(count.storage.ownObserverCount == observers)
    await count.projectedValue.load { 1 }
    #expect(calls == Array(0..<observers) + Array(0..<observers))
    #expect(
      states
        == Array(repeating: LoadableState<Int>.loading, count: observers)
        + Array(repeating: .loaded(1), count: observers))
    for token in tokens { token.cancel() }
    #expect(count.storage.ownObserverCount == 0)
    count.wrappedValue = .absent
    #expect(calls.count == 2 * observers)
  }

  /// The same through a model's registry, for a key-path load.
  @Test func tenThousandObserversOfAKeyPathStateAreEachCalledOnceInOrder() async {
    let model = OddInputModel()
    let observers = 10_000
    var calls: [Int] = []
    var tokens: [ObservationToken] = []
    for index in 0..<observers {
      tokens.append(model.observe(\.plain) { _ in calls.append(index) })
    }
    await model.load(\.plain) { 1 }
    #expect(calls == Array(0..<observers) + Array(0..<observers))
    tokens.removeAll()
    #expect(model.observers.observerCount == 0)
    #expect(keyPathHostCount(of: model) == 0)
  }

  // MARK: Tokens cancelled from inside their own handler

  /// A token cancelled — or released — from inside its own handler at the `.loading` of a running load: that
  /// observer hears `.loading` only, the others hear the whole load, and only the others stay registered.
  @Test(arguments: LoadFaceKind.allCases)
  func tokenCancelledOrReleasedInsideItsOwnHandlerDuringALoad(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let before = face.record()
    let cancelled = ReentrancyBox<[LoadableState<Int>]>([])
    let cancelledToken = ReentrancyBox<ObservationToken?>(nil)
    cancelledToken.value = face.observe { state in
      cancelled.value.append(state)
      cancelledToken.value?.cancel()
    }
    let released = ReentrancyBox<[LoadableState<Int>]>([])
    let releasedToken = ReentrancyBox<ObservationToken?>(nil)
    releasedToken.value = face.observe { state in
      released.value.append(state)
      releasedToken.value = nil
    }
    let after = face.record()
    #expect(face.observerCount() == 4)
    let gate = Gate()
    let task = face.loadYielding { yield in
      yield(.loaded(1))
      await gate.wait()
      yield(.loaded(2))
    }
    gate.open()
    await task.value
    let all: [LoadableState<Int>] = [.loading, .loaded(1), .loaded(2)]
    #expect(cancelled.value == [.loading])
    #expect(released.value == [.loading])
    #expect(releasedToken.value == nil)
    #expect(before.values == all)
    #expect(after.values == all)
    #expect(face.observerCount() == 2)
    before.token?.cancel()
    after.token?.cancel()
    cancelledToken.value?.cancel()
    #expect(face.observerCount() == 0)
  }
}

import ProcessedTesting
import Testing

@testable import Processed

/// The shortcuts the write and load paths take (see Documentation/Performance.md) must not change what observers and
/// loads see: key paths are found by identity first and by equality after, observer calls hold no reference of their
/// own, and a wrapper's loads share one weak reference to it.
@MainActor
@Suite struct FastPathTests {
  /// A key path object equal to the literal `\KeyPathVM.nested.numbers`, but made at run time: a different object.
  private let madeNumbers =
    (\KeyPathVM.nested).appending(path: \KeyPathVM.Nested.numbers)

  @Test func equalKeyPathObjectsShareOneSlotAndOneLoad() async {
    let literal = \KeyPathVM.nested.numbers
    #expect(madeNumbers == literal)
    #expect(madeNumbers !== literal)

    let model = KeyPathVM()
    let viaLiteral = StateRecorder(model, literal)
    let viaMade = StateRecorder(model, madeNumbers)
    let gate = Gate()
    // Started through one object, superseded through the other, then through the first again: one state, one load.
    let first: Task<Void, Never> = model.load(literal) {
      await gate.wait()
      return [1]
    }
    let second: Task<Void, Never> = model.load(madeNumbers) {
      await gate.wait()
      return [2]
    }
    let third: Task<Void, Never> = model.load(literal) { [3] }
    await third.value
    gate.open()
    await first.value
    await second.value

    #expect(model.nested.numbers == .loaded([3]))
    #expect(viaLiteral.values == [.loading, .loaded([3])])
    #expect(viaMade.values == [.loading, .loaded([3])])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func alternatingKeyPathsOfOneRegistryKeepTheirOwnSlots() {
    let model = TwoCounters()
    var firsts: [Int] = []
    var seconds: [Int] = []
    var tokens: [ObservationToken] = []
    // Each registration and write resolves a different key path than the one before it.
    for round in 1...3 {
      tokens.append(model.observe(\.first) { firsts.append($0 * round) })
      tokens.append(model.observe(\.second) { seconds.append($0 * round) })
      model.first = round
      model.second = -round
    }
    #expect(firsts == [1, 2, 4, 3, 6, 9])
    #expect(seconds == [-1, -2, -4, -3, -6, -9])
    _ = tokens
  }

  @Test func cancellingThroughAnEqualKeyPathObjectReachesTheLoad() async {
    let model = KeyPathVM()
    let recorder = StateRecorder(model, \.nested.numbers)
    let gate = Gate()
    let task: Task<Void, Never> = model.load(\.nested.numbers) {
      await gate.wait()
      return [1]
    }
    model.cancel(madeNumbers)
    gate.open()
    await task.value
    #expect(model.nested.numbers == .loading)
    #expect(recorder.values == [.loading])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func oneKeyPathObjectOnTwoInstancesKeepsTwoLoads() async {
    let keyPath = \KeyPathVM.numbers
    let first = KeyPathVM()
    let second = KeyPathVM()
    let gate = Gate()
    // Alternating instances with the same key path object: the lookup remembered for one must not serve the other.
    let firstTask = model(first, loads: keyPath, gate: gate, value: [1])
    let secondTask = model(second, loads: keyPath, gate: gate, value: [2])
    first.cancel(keyPath)
    gate.open()
    await firstTask.value
    await secondTask.value
    #expect(first.numbers == .loading)
    #expect(second.numbers == .loaded([2]))
    #expect(keyPathHostCount(of: first) == 0)
    #expect(keyPathHostCount(of: second) == 0)
  }

  @Test func aLoadStartedAfterAManualWriteWritesItsStartStateAgain() async {
    // The key-path faces read the state where the compiler sees the key path literal; that read must be the
    // state as it is now, also after a write the running load did not make.
    let model = KeyPathVM()
    let recorder = StateRecorder(model, \.numbers)
    let gate = Gate()
    let first: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      return [1]
    }
    model.numbers = .absent  // a manual write to a plain property: the load runs on
    let keyPath = \KeyPathVM.numbers  // not a literal at the call site
    let second: Task<Void, Never> = model.load(keyPath) { [2] }
    await second.value
    let third: Task<Void, Never> = model.load(\.numbers) { [3] }  // from .loaded([2]): writes .loading again
    await third.value
    gate.open()
    await first.value
    #expect(recorder.values == [.loading, .loading, .loaded([2]), .loading, .loaded([3])])
    #expect(model.numbers == .loaded([3]))
  }

  @Test func aModelIsReleasedWhenItsLoadEndsEvenIfItWasLookedUpLast() async {
    weak var weakModel: KeyPathVM?
    do {
      let model = KeyPathVM()
      weakModel = model
      await model.load(\.numbers) { [1] }
      // Still the last lookup: a cancel of a load that already ended finds nothing and keeps nothing.
      model.cancel(\.numbers)
    }
    #expect(weakModel == nil)
  }

  @Test func aHandlerThatReleasesItsOwnTokenRunsToTheEnd() {
    final class Holder {
      var token: ObservationToken?
      var calls: [Int] = []
    }
    let loadable = Loadable<Int>()
    let holder = Holder()
    holder.token = loadable.projectedValue.observe { [holder] state in
      // Releasing the last reference to the token cancels it while this handler is still running; the handler
      // and what it captured must stay valid until it returns.
      holder.token = nil
      if case .loaded(let value) = state { holder.calls.append(value) }
    }
    loadable.wrappedValue = .loaded(1)
    loadable.wrappedValue = .loaded(2)
    #expect(holder.calls == [1])
    #expect(holder.token == nil)
  }

  @Test func releasingAWrapperCancelsEveryLoadSharingItsHostReference() async {
    let gate = Gate()
    var tasks: [Task<Void, Never>] = []
    var tokens: [ObservationToken] = []
    var seen: [LoadableState<Int>] = []
    do {
      let loadable = Loadable<Int>()
      tokens.append(loadable.projectedValue.observe { seen.append($0) })
      for value in 1...3 {
        tasks.append(
          loadable.projectedValue.load {
            await gate.wait()
            return value
          })
      }
    }
    gate.open()
    for task in tasks { await task.value }
    #expect(tasks.allSatisfy { $0.isCancelled })
    #expect(seen == [.loading])
  }

  private func model(
    _ model: KeyPathVM, loads keyPath: ReferenceWritableKeyPath<KeyPathVM, LoadableState<[Int]>>, gate: Gate,
    value: [Int]
  ) -> Task<Void, Never> {
    model.load(keyPath) {
      await gate.wait()
      return value
    }
  }

  /// A plan keeps the fields of shaped loads in a box shared by its copies: changing one copy never changes another.
  @Test func aPlansCopiesDoNotShareChanges() {
    var first = LoadPlan<LoadableState<Int>>.load(returning: { 1 })
    #expect(first.shape == nil)
    first.interrupts = [.seconds(1)]
    var second = first
    #expect(second.shape === first.shape)
    second.interrupts = [.seconds(2)]
    second.debounce = .seconds(3)
    #expect(first.interrupts == [.seconds(1)])
    #expect(first.debounce == nil)
    #expect(second.interrupts == [.seconds(2)])
    #expect(second.debounce == .seconds(3))
    // A plan that holds the only reference changes its box in place (a copy would be made while the old box lives:
    // another identity).
    let box = second.shape.map(ObjectIdentifier.init)
    second.debounce = nil
    #expect(second.shape.map(ObjectIdentifier.init) == box)
    #expect(second.debounce == nil)
  }
}

@MainActor
private final class TwoCounters: ObservableModel {
  let observers = ObserverRegistry()
  @Observed var first = 0
  @Observed var second = 0
}

import Processed
import ProcessedTesting
import Testing

/// A `yield` writes only while its load is current and the task running its block is not cancelled. The engine
/// reads that cancellation from a flag raised by a cancellation handler (not from `Task.isCancelled`); these tests
/// pin down that every way a block's task gets cancelled still stops its `yield`s at once — with blocks that ignore
/// cancellation, held at gates.
@MainActor
@Suite struct YieldCancellationTests {
  @MainActor
  final class Model: ObservableModel, LoadableSupport {
    let observers = ObserverRegistry()
    var numbers: LoadableState<Int> = .absent
    @Loadable var wrapped: LoadableState<Int>
  }

  enum Face: CaseIterable {
    case keyPath, wrapper
  }

  /// Starts a yielding load of `face`'s state: yields 1, waits at `gate` (ignoring cancellation), yields 2.
  func startLoad(_ face: Face, of model: Model, gate: Gate) -> Task<Void, Never> {
    switch face {
    case .keyPath:
      model.load(\.numbers) { yield in
        yield(.loaded(1))
        await gate.wait()
        yield(.loaded(2))
      }
    case .wrapper:
      model.$wrapped.load { yield in
        yield(.loaded(1))
        await gate.wait()
        yield(.loaded(2))
      }
    }
  }

  func recorder(_ face: Face, of model: Model) -> StateRecorder<LoadableState<Int>> {
    switch face {
    case .keyPath: StateRecorder(model, \.numbers)
    case .wrapper: StateRecorder(model.$wrapped)
    }
  }

  /// Where the load's task is cancelled from.
  enum Canceller: CaseIterable {
    case mainActor, anotherThread
  }

  @Test(arguments: Face.allCases, Canceller.allCases)
  func aYieldAfterTheTaskWasCancelledWritesNothing(_ face: Face, _ canceller: Canceller) async {
    let model = Model()
    let gate = Gate()
    let history = recorder(face, of: model)
    let task = startLoad(face, of: model, gate: gate)
    await gate.untilWaiting(1)
    switch canceller {
    case .mainActor: task.cancel()
    // `cancel()` returns only once the cancellation handlers ran: the flag is raised before the gate opens.
    case .anotherThread: await Task.detached { task.cancel() }.value
    }
    gate.open()
    await task.value
    #expect(history.values == [.loading, .loaded(1)])
  }

  @Test(arguments: Face.allCases)
  func aBlockWhoseTaskWasCancelledBeforeItRanYieldsNothing(_ face: Face) async {
    let model = Model()
    let gate = Gate()
    gate.open()
    let history = recorder(face, of: model)
    let task = startLoad(face, of: model, gate: gate)
    task.cancel()  // before the task first runs: the handler sees a cancelled task when it is registered
    await task.value
    #expect(history.values == [.loading])
  }

  @Test func anAsyncCallerThatIsCancelledStopsTheYieldsOfItsLoad() async {
    let model = Model()
    let gate = Gate()
    let history = StateRecorder(model, \.numbers)
    let caller = Task {
      await model.load(\.numbers) { yield in
        yield(.loaded(1))
        await gate.wait()
        yield(.loaded(2))
      }
    }
    await gate.untilWaiting(1)
    caller.cancel()
    gate.open()
    await caller.value
    #expect(history.values == [.loading, .loaded(1)])
  }

  @Test func aTimedOutAttemptThatGoesOnYieldingNeverWritesWhileTheRetryRuns() async throws {
    let clock = TestClock()
    let model = Model()
    let late = Gate()
    let retried = Gate()
    var attempts = 0
    let history = StateRecorder(model, \.numbers)
    let options = LoadOptions(retry: .constant(.zero, maxRetries: 1), timeout: .seconds(1), clock: clock)
    let task: Task<Void, Never> = model.load(\.numbers, options: options) { yield in
      attempts += 1
      let attempt = attempts
      // Both attempts ignore cancellation; the first one outlives its timeout.
      await (attempt == 1 ? late : retried).wait()
      yield(.loaded(attempt))
    }
    await late.untilWaiting(1)
    try await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    await retried.untilWaiting(1)
    // The load is still current (its second attempt runs), but the first attempt's task was cancelled.
    late.open()
    await late.untilWaiting(0)
    await Task.yield()
    #expect(history.values == [.loading])
    retried.open()
    await task.value
    #expect(history.values == [.loading, .loaded(2)])
  }
}

import ProcessedTesting
import Testing

@testable import Processed

// MARK: - B8 async forms

@MainActor
@Suite struct LoadableSupportAsyncFormTests {
  /// Starts `await model.load(\.numbers) { … }` in a task whose block sleeps (cooperatively) for a long time, then
  /// returns a value that must never be written. Returns the caller's task once the block runs.
  private func startWaitingLoad(
    _ model: KeyPathVM, cancelled: KeyPathBox<Bool?>
  ) async -> Task<Void, Never> {
    let started = KeyPathBox(false)
    let caller = Task {
      await model.load(\.numbers) {
        started.value = true
        await untilCancelled()
        cancelled.value = Task.isCancelled
        return [1]
      }
    }
    await until(.changes(of: started)) { started.value }
    return caller
  }

  @Test func returnsWhenTheLoadEnds() async {
    let model = KeyPathVM()
    await model.load(\.numbers) { yield in yield(.loaded([1])) }
    #expect(model.numbers == .loaded([1]))
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func stoppedByCancel() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingLoad(model, cancelled: cancelled)
    #expect(keyPathHostCount(of: model) == 1)
    model.cancel(\.numbers)
    await caller.value
    #expect(cancelled.value == true)
    #expect(history.values == [.loading])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func stoppedByReset() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingLoad(model, cancelled: cancelled)
    model.reset(\.numbers)
    await caller.value
    #expect(cancelled.value == true)
    #expect(history.values == [.loading, .absent])
  }

  @Test func stoppedByANewerLoad() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingLoad(model, cancelled: cancelled)
    let newer: Task<Void, Never> = model.load(\.numbers) { [2] }
    await caller.value
    await newer.value
    #expect(cancelled.value == true)
    #expect(history.values == [.loading, .loaded([2])])
  }

  @Test func stoppedByCancellingTheCaller() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    let cancelled = KeyPathBox<Bool?>(nil)
    let caller = await startWaitingLoad(model, cancelled: cancelled)
    caller.cancel()
    await caller.value
    #expect(cancelled.value == true)
    #expect(history.values == [.loading])
    #expect(keyPathHostCount(of: model) == 0)
  }

  @Test func blockInheritsTheCallersTaskLocalValues() async {
    let model = KeyPathVM()
    await KeyPathTaskLocal.$marker.withValue(42) {
      await model.load(\.other) { KeyPathTaskLocal.marker }
    }
    #expect(model.other == .loaded(42))
  }

  @Test func blockInheritsTheCallersPriority() async {
    let model = KeyPathVM()
    // Nobody awaits the caller (that would escalate its priority); the test waits for the state's change instead.
    let caller = Task(priority: .low) {
      await model.load(\.other) { Int(Task.basePriority?.rawValue ?? 0) }
    }
    await until(.changes(of: model, \.other)) { model.other.isLoaded }
    #expect(model.other == .loaded(Int(TaskPriority.low.rawValue)))
    _ = caller
  }

  @Test func yieldingAsyncFormStoppedByCancellingTheCaller() async {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    let started = KeyPathBox(false)
    let caller = Task {
      await model.load(\.numbers) { yield in
        yield(.loaded([1]))
        started.value = true
        await untilCancelled()
        yield(.loaded([2]))
      }
    }
    await until(.changes(of: started)) { started.value }
    caller.cancel()
    await caller.value
    #expect(history.values == [.loading, .loaded([1])])
  }
}

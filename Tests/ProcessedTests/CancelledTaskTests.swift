import Processed
import ProcessedTesting
import Testing

/// A load whose task was cancelled through its `Task` can no longer write: nor report progress, nor be joined.
@MainActor
@Suite struct CancelledTaskTests {
  @MainActor
  final class Model: ObservableModel {
    let observers = ObserverRegistry()
    @Loadable var numbers: LoadableState<Int>
  }

  @Test func progressReportedAfterTheTaskWasCancelledIsDropped() async {
    let model = Model()
    let first = Gate()
    let second = Gate()
    let task: Task<Void, Never> = model.$numbers.load {
      await first.wait()
      LoadProgress.report(fraction: 0.5)
      await second.wait()
      return 1
    }
    await first.untilWaiting(1)
    task.cancel()
    first.open()
    await second.untilWaiting(1)
    #expect(model.$numbers.activity.progress == nil)
    second.open()
    await task.value
    #expect(model.numbers == .loading)  // cancelled: the value is dropped, the state left as it was
  }

  @Test func aJoiningCallDoesNotJoinALoadWhoseTaskWasCancelled() async {
    let model = Model()
    let gate = Gate()
    let cancelled: Task<Void, Never> = model.$numbers.load {
      await gate.wait()
      return 1
    }
    await gate.untilWaiting(1)
    cancelled.cancel()
    var runs = 0
    let joining: Task<Void, Never> = model.$numbers.load(options: LoadOptions(overlap: .joinRunning)) {
      runs += 1
      return 2
    }
    gate.open()  // the cancelled block returns (and writes nothing); a joined call would end with it
    await joining.value
    await cancelled.value
    #expect(runs == 1)
    #expect(model.numbers == .loaded(2))
  }
}

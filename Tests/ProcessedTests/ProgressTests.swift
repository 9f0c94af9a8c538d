import Dispatch
import ProcessedTesting
import Testing

@testable import Processed

/// `LoadProgress`: clamped, reported by the running load only, cleared when it ends.
@MainActor
@Suite struct ProgressTests {
  @Test func fractionsAreClampedAndNaNIsIndeterminate() {
    #expect(LoadProgress(fraction: -0.5).fraction == 0)
    #expect(LoadProgress(fraction: 1.5).fraction == 1)
    #expect(LoadProgress(fraction: .infinity).fraction == 1)
    #expect(LoadProgress(fraction: -.infinity).fraction == 0)
    #expect(LoadProgress(fraction: .nan).fraction == nil)
    #expect(LoadProgress(fraction: nil, message: "…").fraction == nil)
    var progress = LoadProgress(fraction: 0.5)
    progress.fraction = 7
    #expect(progress.fraction == 1)
  }

  @Test func theRunningLoadsReportsAreItsProgressAndEndWithIt() async {
    let state = Loadable<Int>()
    var progress: [LoadProgress?] = []
    let token = state.projectedValue.observeActivity { progress.append($0.progress) }
    await state.projectedValue.load {
      LoadProgress.report(fraction: 0.25, message: "a quarter")
      LoadProgress.report(fraction: 0.25, message: "a quarter")  // unchanged: not delivered again
      await Task.yield()
      LoadProgress.report(fraction: 2)
      return 1
    }
    #expect(progress == [nil, LoadProgress(fraction: 0.25, message: "a quarter"), LoadProgress(fraction: 1), nil])
    #expect(state.projectedValue.activity.progress == nil)
    token.cancel()
  }

  @Test func reportsOfAStaleLoadOrOutsideAnyLoadAreDropped() async {
    let state = Loadable<Int>()
    LoadProgress.report(fraction: 0.5)  // outside any load: nothing
    #expect(state.projectedValue.activity.progress == nil)
    let gate = Gate()
    let stale: Task<Void, Never> = state.projectedValue.load {
      await gate.wait()
      LoadProgress.report(fraction: 0.9, message: "stale")
      return 1
    }
    let currentGate = Gate()
    let current: Task<Void, Never> = state.projectedValue.load {
      LoadProgress.report(fraction: 0.1)
      await currentGate.wait()
      return 2
    }
    await until(.activity(of: state.projectedValue)) { state.projectedValue.activity.progress?.fraction == 0.1 }
    gate.open()
    await stale.value
    #expect(state.projectedValue.activity.progress?.fraction == 0.1)
    currentGate.open()
    await current.value
    #expect(state.projectedValue.activity.progress == nil)
  }

  @Test func aTaskStartedInsideTheBlockThatOutlivesTheLoadReportsNothing() async {
    let state = Loadable<Int>()
    let gate = Gate()
    var late: Task<Void, Never>?
    var detached: Task<Void, Never>?
    await state.projectedValue.load {
      late = Task { @MainActor in
        await gate.wait()
        LoadProgress.report(fraction: 0.5)
      }
      detached = Task.detached { @MainActor in
        LoadProgress.report(fraction: 0.7)  // no context: nothing
      }
      return 1
    }
    await detached?.value
    gate.open()
    await late?.value
    await state.projectedValue.load { yield in
      yield(.loaded(2))
    }
    #expect(state.projectedValue.activity.progress == nil)
  }

  /// A load started where no task runs — a main-queue callback, as a UI event handler is — binds its context all the
  /// same: its block's reports are its progress.
  @Test func aLoadStartedOutsideAnyTaskReportsProgress() async throws {
    let state = Loadable<Int>()
    var fractions: [Double?] = []
    let token = state.projectedValue.observeActivity { fractions.append($0.progress?.fraction) }
    let gate = Gate()
    let started: Task<Void, Never>? = await withCheckedContinuation { continuation in
      DispatchQueue.main.async {
        MainActor.assumeIsolated {
          let outsideAnyTask = withUnsafeCurrentTask { $0 == nil }
          let task: Task<Void, Never> = state.projectedValue.load {
            LoadProgress.report(fraction: 0.5)
            await gate.wait()
            return 1
          }
          continuation.resume(returning: outsideAnyTask ? task : nil)
        }
      }
    }
    guard let started else {
      Issue.record("the main-queue callback ran inside a task")
      return
    }
    await until(.activity(of: state.projectedValue)) { state.projectedValue.activity.progress?.fraction == 0.5 }
    gate.open()
    try await started.value(timeLimit: .seconds(30))
    #expect(fractions == [nil, 0.5, nil])
    #expect(state.wrappedValue == .loaded(1))
    token.cancel()
  }

  @Test func processesReportProgressToo() async {
    @Processed.Process var upload
    var fractions: [Double?] = []
    let token = $upload.observeActivity { fractions.append($0.progress?.fraction) }
    await $upload.run {
      for chunk in 1...2 {
        await Task.yield()
        LoadProgress.report(fraction: Double(chunk) / 2, message: "chunk \(chunk)")
      }
    }
    #expect(fractions == [nil, 0.5, 1, nil])
    token.cancel()
  }
}

import Foundation
import Testing

@testable import Processed

/// The class examples of the original Processed package (its README and its example app's "In Classes" demos),
/// compiled as they were written there apart from what only Apple's frameworks provide:
/// - `ObservableObject` / `@Published` are removed (Combine);
/// - the README's `Process<ProcessKind>` typo reads `ProcessState<ProcessKind>` (as in its demos);
/// - `[42, 73].publisher.values` (Combine) reads `publisherValues([42, 73])`, an `AsyncStream` of the same numbers;
/// - the README's `try await save()` inside `func save()` calls a `saveToDisk()` helper (it recursed into itself);
/// - delays are milliseconds instead of seconds, so that the tests stay fast;
/// - the methods whose load a test cancels or resets return the load's task (`@discardableResult`), so that the test
///   awaits its end instead of sleeping.
/// Everything else — `load(\.numbers) { … }` without `self.`, `run(\.process, as: .save)`, `run(\.process)`,
/// `load(\.numbers) { yield in … }`, `onInterrupt: { accumulatedDelay in … }`, `cancel(\.…)`, `reset(\.…)` — is
/// unchanged.
enum OriginalExamples {
  // README, "Use LoadableState in Classes".
  @MainActor final class ViewModel: LoadableSupport {
    // Define the LoadableState enum as a normal @Published property
    var numbers: LoadableState<[Int]> = .absent

    @discardableResult
    func loadNumbers() -> Task<Void, Never> {
      // Call the load method from the LoadableSupport protocol
      load(\.numbers) {
        return try await fetchNumbers()
      }
    }

    func loadStreamedNumbers() {
      // Call the load method that yields results from the LoadableSupport protocol
      load(\.numbers) { yield in
        var numbers: [Int] = []
        for await number in publisherValues([42, 73]) {
          try await Task.sleep(for: .milliseconds(1))
          numbers.append(number)
          yield(.loaded(numbers))
        }
      }
    }

    func cancelLoading() {
      cancel(\.numbers)
    }

    func fetchNumbers() async throws -> [Int] {
      try await Task.sleep(for: .milliseconds(2))
      return [42]
    }
  }

  // README, "Use ProcessState in Classes".
  enum ProcessKind {
    case save
    case delete
  }

  @MainActor final class ProcessViewModel: ProcessSupport {
    // Define the Process enum as a normal @Published property
    var process: ProcessState<ProcessKind> = .idle
    var disk: [ProcessKind] = []

    @discardableResult
    func save() -> Task<Void, Never> {
      // Call the run method from the ProcessSupport protocol
      run(\.process, as: .save) {
        try await saveToDisk()
      }
    }

    func delete() {
      // Call the run method from the ProcessSupport protocol
      run(\.process, as: .delete) {
        try await deleteFromDisk()
      }
    }

    func cancelLoading() {
      cancel(\.process)
    }

    func saveToDisk() async throws {
      try await Task.sleep(for: .milliseconds(1))
      disk.append(.save)
    }

    func deleteFromDisk() async throws {
      try await Task.sleep(for: .milliseconds(1))
      disk.append(.delete)
    }
  }

  // Example app, "SimpleProcessInClassDemo".
  @MainActor final class SimpleProcessViewModel: ProcessSupport {
    var process: ProcessState<SingleProcess> = .idle

    func cancelProcess() {
      cancel(\.process)
    }

    func resetProcess() {
      reset(\.process)
    }

    @discardableResult
    func runSuccess() -> Task<Void, Never> {
      run(\.process) {
        try await Task.sleep(for: .milliseconds(2))
      }
    }

    func runError() {
      run(\.process) {
        try await Task.sleep(for: .milliseconds(2))
        throw NSError(domain: "Something went wrong", code: 500)
      }
    }
  }

  // Example app, "SharedProcessInClassDemo".
  enum SharedProcessKind: String, Equatable {
    case save = "Save"
    case delete = "Delete"
  }

  @MainActor final class SharedProcessViewModel: ProcessSupport {
    var process: ProcessState<SharedProcessKind> = .idle

    func cancelProcess() {
      cancel(\.process)
    }

    func resetProcess() {
      reset(\.process)
    }

    func save() {
      run(\.process, as: .save) {
        try await Task.sleep(for: .milliseconds(2))
      }
    }

    func delete() {
      run(\.process, as: .delete) {
        try await Task.sleep(for: .milliseconds(2))
      }
    }
  }

  // Example app, "LoadableInterruptsInClassDemo" (note its own `load()` beside the protocol's `load(\.numbers)`).
  @MainActor final class InterruptsViewModel: LoadableSupport {
    var numbers: LoadableState<[Int]> = .absent
    var showLoadingDelay: Bool = false

    func cancelNumbers() {
      cancel(\.numbers)
    }

    func resetNumbers() {
      reset(\.numbers)
    }

    func load() {
      load(\.numbers) {
        try await Task.sleep(for: .milliseconds(2))
        return [1, 2, 3, 4, 5]
      }
    }

    @discardableResult
    func loadWithTimeout() -> Task<Void, Never> {
      // Show "delay" info after 20 ms, and time out after 50 ms
      load(\.numbers, interrupts: [.milliseconds(20), .milliseconds(30)]) {
        try await Task.sleep(for: .seconds(10))
        return [1, 2, 3, 4, 5]
      } onInterrupt: { accumulatedDelay in
        switch accumulatedDelay {
        case .milliseconds(50):  // Accumulated 50 ms at this point
          throw TimeoutError()
        default:
          showLoadingDelay = true
        }
      }
    }
  }

}

/// Stands in for Combine's `[42, 73].publisher.values`.
private func publisherValues(_ numbers: [Int]) -> AsyncStream<Int> {
  AsyncStream { continuation in
    for number in numbers { continuation.yield(number) }
    continuation.finish()
  }
}

@MainActor
@Suite struct OriginalExamplesTests {
  @Test func readmeLoadableViewModel() async {
    let viewModel = OriginalExamples.ViewModel()
    viewModel.loadNumbers()
    #expect(viewModel.numbers == .loading)
    await until(.changes(of: viewModel.loadables.numbers)) { !viewModel.numbers.isLoading }
    #expect(viewModel.numbers == .loaded([42]))
  }

  @Test func readmeStreamedNumbers() async {
    let viewModel = OriginalExamples.ViewModel()
    viewModel.loadStreamedNumbers()
    #expect(viewModel.numbers == .loading)
    await until(.changes(of: viewModel.loadables.numbers)) { viewModel.numbers == .loaded([42, 73]) }
    #expect(viewModel.numbers == .loaded([42, 73]))
  }

  @Test func readmeCancelLoading() async {
    let viewModel = OriginalExamples.ViewModel()
    let load = viewModel.loadNumbers()
    viewModel.cancelLoading()
    // The cancelled load has ended: had it (wrongly) written its result, it would be there now.
    await load.value
    #expect(viewModel.numbers == .loading)
  }

  @Test func readmeProcessViewModel() async {
    let viewModel = OriginalExamples.ProcessViewModel()
    viewModel.save()
    #expect(viewModel.process == .running(.save))
    await until(.changes(of: viewModel.processes.process)) { viewModel.process == .finished(.save) }
    viewModel.delete()
    #expect(viewModel.process == .running(.delete))
    await until(.changes(of: viewModel.processes.process)) { viewModel.process == .finished(.delete) }
    #expect(viewModel.disk == [.save, .delete])
  }

  @Test func readmeProcessCancel() async {
    let viewModel = OriginalExamples.ProcessViewModel()
    let save = viewModel.save()
    viewModel.cancelLoading()
    await save.value  // the cancelled process has ended without writing or saving
    #expect(viewModel.process == .running(.save))
    #expect(viewModel.disk.isEmpty)
  }

  @Test func simpleSingleProcessSucceedsAndFails() async {
    let viewModel = OriginalExamples.SimpleProcessViewModel()
    viewModel.runSuccess()
    #expect(viewModel.process.isRunning)
    await until(.changes(of: viewModel.processes.process)) { viewModel.process.hasFinished }
    viewModel.runError()
    await until(.changes(of: viewModel.processes.process)) { viewModel.process.hasFailed }
    let error = viewModel.process.error as? NSError
    #expect(error?.domain == "Something went wrong")
    #expect(error?.code == 500)
    viewModel.resetProcess()
    #expect(viewModel.process == .idle)
  }

  @Test func simpleSingleProcessCancel() async {
    let viewModel = OriginalExamples.SimpleProcessViewModel()
    let process = viewModel.runSuccess()
    viewModel.cancelProcess()
    await process.value  // the cancelled process has ended without writing
    #expect(viewModel.process.isRunning)
  }

  @Test func sharedProcess() async {
    let viewModel = OriginalExamples.SharedProcessViewModel()
    viewModel.save()
    #expect(viewModel.process.isRunning(.save))
    viewModel.delete()
    #expect(viewModel.process.isRunning(.delete))
    await until(.changes(of: viewModel.processes.process)) { !viewModel.process.isRunning }
    #expect(viewModel.process == .finished(.delete))
  }

  @Test func interruptsDemoLoads() async {
    let viewModel = OriginalExamples.InterruptsViewModel()
    viewModel.load()
    await until(.changes(of: viewModel.loadables.numbers)) { viewModel.numbers.isLoaded }
    #expect(viewModel.numbers == .loaded([1, 2, 3, 4, 5]))
    #expect(!viewModel.showLoadingDelay)
  }

  @Test func interruptsDemoTimesOut() async {
    let viewModel = OriginalExamples.InterruptsViewModel()
    viewModel.loadWithTimeout()
    #expect(viewModel.numbers == .loading)
    await until(.changes(of: viewModel.loadables.numbers)) { viewModel.numbers.isError }
    #expect(viewModel.showLoadingDelay)
    #expect(viewModel.numbers == .error(TimeoutError()))
  }

  @Test func interruptsDemoReset() async {
    let viewModel = OriginalExamples.InterruptsViewModel()
    let load = viewModel.loadWithTimeout()
    viewModel.resetNumbers()
    #expect(viewModel.numbers == .absent)
    // The reset load has ended, and its interrupt timer with it (that a superseded load's interrupts never fire
    // later is LatestWinsTests' `supersededLoadsInterruptNeverFires`, on a TestClock).
    await load.value
    #expect(viewModel.numbers == .absent)
    #expect(!viewModel.showLoadingDelay)
  }
}

import Testing

@testable import Processed

struct SmokeError: Error, Equatable {}

@MainActor
@Suite struct SmokeTests {
  @Test func loadWritesLoadingThenValue() async {
    let numbers = Loadable<[Int]>()
    let recorder = Recorder(numbers.projectedValue)
    await numbers.projectedValue.load { [1, 2] }
    #expect(recorder.values == [.loading, .loaded([1, 2])])
  }

  @Test func staleLoadNeverWrites() async {
    let numbers = Loadable<Int>()
    let recorder = Recorder(numbers.projectedValue)
    let gate = Gate()
    let first: Task<Void, Never> = numbers.projectedValue.load {
      await gate.wait()
      return 1
    }
    await eventually { gate.waiting == 1 }
    let second: Task<Void, Never> = numbers.projectedValue.load { 2 }
    await second.value
    gate.open()
    await first.value
    #expect(recorder.values == [.loading, .loaded(2)])
  }

  @Test func processRunFinishes() async {
    @Process var save
    let recorder = Recorder($save)
    let process = SingleProcess(id: "x")
    await $save.run(process) {}
    #expect(recorder.values == [.running(process), .finished(process)])
  }

  @Test func timeoutThroughInterrupt() async {
    let numbers = Loadable<Int>()
    let recorder = Recorder(numbers.projectedValue)
    await numbers.projectedValue.load(interrupts: [.milliseconds(10)]) {
      try? await Task.sleep(for: .seconds(30))
      return 1
    } onInterrupt: { _ in
      throw TimeoutError()
    }
    #expect(recorder.values == [.loading, .error(TimeoutError())])
  }
}

@MainActor
final class SmokeViewModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  var numbers: LoadableState<[Int]> = .absent
  var upload: SingleProcessState = .idle
  @Loadable var wrapped: LoadableState<Int>

  func fetch() async throws -> [Int] { [4, 5] }

  func refresh() async {
    await load(\.numbers) { try await fetch() }
  }
}

@MainActor
@Suite struct KeyPathSmokeTests {
  @Test func keyPathLoadNotifiesModelObserversOnce() async {
    let model = SmokeViewModel()
    var history: [LoadableState<[Int]>] = []
    let token = model.observe(\.numbers) { history.append($0) }
    await model.refresh()
    #expect(history == [.loading, .loaded([4, 5])])
    #expect(!KeyPathHostKey.table.keys.contains { $0.instance == ObjectIdentifier(model) })
    token.cancel()
  }

  @Test func wrapperInModelNotifiesModelObservers() async {
    let model = SmokeViewModel()
    var history: [LoadableState<Int>] = []
    let token = model.observe(\.wrapped) { history.append($0) }
    await model.$wrapped.load { 7 }
    #expect(history == [.loading, .loaded(7)])
    token.cancel()
  }
}

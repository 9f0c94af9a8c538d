// A suite of the TestingWithObservers.md article, compiled and run as DocExamplesTests.swift describes; the
// stubs it assumes (`NetworkError`, …) are the `DocExamples.TestingWithObserversDocs` of that file.
import Processed
import ProcessedTesting
import Testing

extension DocExamples.TestingWithObserversDocs {
  // doc: TestingWithObservers.md:88
  /// Tasks that call `wait()` suspend until `open()` is called.
  @MainActor
  final class Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
      if isOpen { return }
      await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
      isOpen = true
      for waiter in waiters { waiter.resume() }
      waiters = []
    }
  }

  @Suite struct GateTests {
    // doc corrected (the source now shows this form): TestingWithObservers.md:112 — both tests are written as free, non-isolated functions, which
    // cannot call the main-actor `StateRecorder` and `Gate`; each needs `@MainActor`.
    @MainActor
    @Test func newerLoadWins() async {
      @Loadable var numbers: LoadableState<Int>
      let recorder = StateRecorder($numbers)
      let gate = Gate()
      let (started, signalStarted) = AsyncStream.makeStream(of: Void.self)

      let first: Task<Void, Never> = $numbers.load {
        signalStarted.yield()
        await gate.wait()
        return 1
      }
      for await _ in started { break }  // the first load is now waiting at the gate

      await $numbers.load { 2 }  // supersedes the first load
      gate.open()  // the first block returns 1 …
      await first.value

      #expect(recorder.values == [.loading, .loaded(2)])  // … which is never written
    }

    @MainActor
    @Test func cancelKeepsTheState() async {
      @Loadable var numbers: LoadableState<Int>
      let recorder = StateRecorder($numbers)
      let gate = Gate()
      let (started, signalStarted) = AsyncStream.makeStream(of: Void.self)

      let load: Task<Void, Never> = $numbers.load {
        signalStarted.yield()
        await gate.wait()
        return 1
      }
      for await _ in started { break }

      $numbers.cancel()
      gate.open()
      await load.value

      #expect(recorder.values == [.loading])
      #expect(numbers == .loading)
    }
  }
}

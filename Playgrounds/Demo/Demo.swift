// A quick tour of Processed: `swift run Demo`.
//
// A view model loads numbers with `@Loadable`, saves with `@Process`, and a test-style observer prints every state
// the UI would see. Nothing here needs SwiftUI, Combine or the Observation framework.
import Processed

struct NetworkError: Error {}

@MainActor
final class NumbersViewModel: ObservableModel {
  let observers = ObserverRegistry()
  @Loadable var numbers: LoadableState<[Int]>
  @Process var saving
  @Observed var query = ""

  func refresh(failing: Bool = false) async {
    await $numbers.load {
      try await Task.sleep(for: .milliseconds(20))
      if failing { throw NetworkError() }
      return [1, 2, 3]
    }
  }

  func save() async {
    await $saving.run {
      try await Task.sleep(for: .milliseconds(10))
    }
  }
}

@main
struct Demo {
  @MainActor
  static func main() async {
    let model = NumbersViewModel()
    var tokens = Set<ObservationToken>()
    model.observe(\.numbers) { print("numbers →", $0) }.store(in: &tokens)
    model.observe(\.saving) { print("saving  →", $0.isRunning ? "running" : $0.hasFinished ? "finished" : "\($0)") }
      .store(in: &tokens)
    model.observe(\.query) { print("query   →", $0) }.store(in: &tokens)

    print("1. A load: .loading, then the value")
    await model.refresh()

    print("2. A failing load: .loading, then the error")
    await model.refresh(failing: true)

    print("3. The latest load wins: the first, slower load is superseded and never writes")
    let slow: Task<Void, Never> = model.$numbers.load {
      try? await Task.sleep(for: .milliseconds(200))  // ignores cancellation, like much real network code
      return [0]
    }
    await model.$numbers.load { [42] }
    await slow.value
    print("   after both ended:", model.numbers)

    print("4. A process, and a plain observed property")
    await model.save()
    model.query = "primes"

    print("5. Reset")
    model.$numbers.reset()

    print("6. The states sequence: the current state first, then each change")
    let reader = Task { @MainActor in
      var seen: [String] = []
      for await state in model.$numbers.states {
        seen.append("\(state)")
        if state.isLoaded { break }
      }
      return seen
    }
    await Task.yield()
    await model.refresh()
    print("  ", await reader.value)
  }
}

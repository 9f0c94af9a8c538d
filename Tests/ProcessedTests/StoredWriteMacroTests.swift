import Testing

@testable import Processed

#if canImport(Observation)
  import Observation

  /// A model of the `@Observable` macro: its properties are computed, their accessors tell Observation.
  @Observable @MainActor
  final class StoredWriteMacroModel: LoadableSupport {
    var numbers: LoadableState<Int> = .absent
  }

  @MainActor
  @Suite struct StoredWriteMacroTests {
    @Test func anObservableMacroPropertyTellsObservationOfEveryChange() async {
      let model = StoredWriteMacroModel()
      let changes = ChangeCounter()
      var offsets: [Int?] = []
      await model.load(\.numbers) { yield in
        for value in 1...3 {
          // Tracking is one-shot: registered again before each change, it must fire for each.
          withObservationTracking {
            _ = model.numbers
          } onChange: {
            changes.increment()
          }
          yield(.loaded(value))
          offsets.append(KeyPathHost.running(model, \.numbers)?.access.storedOffset)
        }
      }
      #expect(changes.count == 3)
      #expect(offsets == [0, 0, 0])
      #expect(model.numbers == .loaded(3))
    }
  }
#endif

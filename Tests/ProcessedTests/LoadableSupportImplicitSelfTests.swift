import ProcessedTesting
import Testing

@testable import Processed

// MARK: - Members of self without `self.`

@MainActor
@Suite struct LoadableSupportImplicitSelfTests {
  @Test func returningForm() async throws {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    model.source = [4, 5]
    model.refresh()
    #expect(model.numbers == .loading)
    try await history.wait(forCount: 2)
    #expect(history.values == [.loading, .loaded([4, 5])])
  }

  @Test func asyncForm() async {
    let model = KeyPathVM()
    await model.refreshAndWait()
    #expect(model.numbers == .loaded([1, 2, 3]))
  }

  @Test func failingForm() async throws {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    model.refreshFailing()
    try await history.wait(forCount: 2)
    #expect(history.values == [.loading, .error(KeyPathTestError.boom)])
  }

  @Test func yieldingForm() async throws {
    let model = KeyPathVM()
    let history = StateRecorder(model, \.numbers)
    model.cached = [9]
    model.stream()
    try await history.wait(forCount: 3)
    #expect(history.values == [.loading, .loaded([9]), .loaded([1, 2, 3])])
  }

  @Test func interruptForms() async throws {
    let model = KeyPathVM()
    await model.refreshWatchingDelays()
    #expect(model.numbers == .loaded([1, 2, 3]))
    #expect(model.slowInterrupts.count <= 1)
    let history = StateRecorder(model, \.numbers)
    model.streamWatchingDelays()
    try await history.wait(forCount: 2)
    #expect(history.values == [.loading, .loaded([1, 2, 3])])
  }

  @Test func controlMembers() async {
    let model = KeyPathVM()
    let gate = Gate()
    let numbers: Task<Void, Never> = model.load(\.numbers) {
      await gate.wait()
      return [1]
    }
    let other: Task<Void, Never> = model.load(\.other) {
      await gate.wait()
      return 1
    }
    await gate.untilWaiting(2)
    model.stopAll()
    #expect(keyPathHostCount(of: model) == 0)
    gate.open()
    await numbers.value
    await other.value
    #expect(model.numbers == .loading)
    #expect(model.other == .absent)
  }
}

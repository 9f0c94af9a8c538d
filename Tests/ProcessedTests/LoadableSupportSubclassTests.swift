import ProcessedTesting
import Testing

@testable import Processed

// MARK: - Subclasses

/// Key paths with different roots are different states (`\KeyPathSubVM.numbers != \KeyPathBaseVM.numbers`, and Swift
/// offers no root-independent identity), so `LoadableSupport` documents the rule: address a state a subclass
/// inherits through the class that declares it. These tests follow the rule from subclass code — loads, cancels and
/// observers all go through `KeyPathBaseVM` — and show that it then behaves as one state (B6, B7).
@MainActor
@Suite struct LoadableSupportSubclassTests {
  @Test func cancelFromSubclassCodeReachesALoadStartedInTheBaseClass() async {
    let model = KeyPathSubVM()
    let gate = Gate()
    let stale = model.refresh(after: gate)
    await gate.untilWaiting(1)
    (model as KeyPathBaseVM).cancel(\.numbers)
    #expect(keyPathHostCount(of: model) == 0)
    gate.open()
    await stale.value  // the cancelled block has returned: it wrote nothing and registered nothing
    #expect(keyPathHostCount(of: model) == 0)
    #expect(model.numbers == .loading)
  }

  @Test func newerLoadFromSubclassCodeSupersedesALoadStartedInTheBaseClass() async {
    let model = KeyPathSubVM()
    let gate = Gate()
    let stale = model.refresh(after: gate, value: [1])
    await gate.untilWaiting(1)
    await (model as KeyPathBaseVM).load(\.numbers) { [2] }
    gate.open()
    await stale.value  // the superseded block has returned
    #expect(keyPathHostCount(of: model) == 0)
    #expect(model.numbers == .loaded([2]))
  }

  @Test func observerRootedAtTheBaseClassSeesLoadsStartedInTheBaseClass() async {
    let model = KeyPathSubVM()
    let history = StateRecorder(model as KeyPathBaseVM, \.numbers)
    let gate = Gate()
    gate.open()
    await model.refresh(after: gate).value
    #expect(model.numbers.isLoaded)
    #expect(history.values == [.loading, .loaded([1])])
  }

  @Test func observerRootedAtTheBaseClassSeesLoadsStartedFromSubclassCode() async {
    let model = KeyPathSubVM()
    let history = StateRecorder(model as KeyPathBaseVM, \.numbers)
    await (model as KeyPathBaseVM).load(\.numbers) { [2] }
    #expect(model.numbers == .loaded([2]))
    #expect(history.values == [.loading, .loaded([2])])
  }
}

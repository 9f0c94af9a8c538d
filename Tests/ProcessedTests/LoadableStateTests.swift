import Testing

@testable import Processed

@Suite struct LoadableStateTests {
  private struct EquatableError: Error, Equatable {
    var code: Int
  }

  private struct PlainError: Error {
    var message: String
  }

  private struct DescribedError: Error, CustomStringConvertible {
    var description: String { "the network is down" }
  }

  private class BaseError: Error, @unchecked Sendable {}

  private final class SubError: BaseError, @unchecked Sendable {}

  private struct Item: Equatable {
    var name: String
  }

  // MARK: Mutators

  @Test func setAbsent() {
    var state: LoadableState<Int> = .loaded(1)
    state.setAbsent()
    #expect(state == .absent)
  }

  @Test func setLoading() {
    var state: LoadableState<Int> = .absent
    state.setLoading()
    #expect(state == .loading)
  }

  @Test func setError() {
    var state: LoadableState<Int> = .loading
    state.setError(EquatableError(code: 7))
    #expect(state == .error(EquatableError(code: 7)))
    #expect(state.error as? EquatableError == EquatableError(code: 7))
  }

  @Test func setValue() {
    var state: LoadableState<[Int]> = .loading
    state.setValue([1, 2, 3])
    #expect(state == .loaded([1, 2, 3]))
    state.setValue([])
    #expect(state == .loaded([]))
  }

  // MARK: Queries

  @Test(arguments: [
    (LoadableState<Int>.absent, [true, false, false, false]),
    (.loading, [false, true, false, false]),
    (.error(EquatableError(code: 1)), [false, false, true, false]),
    (.loaded(5), [false, false, false, true]),
  ])
  func caseQueries(state: LoadableState<Int>, expected: [Bool]) {
    #expect([state.isAbsent, state.isLoading, state.isError, state.isLoaded] == expected)
  }

  @Test func dataIsTheLoadedValueOnly() {
    #expect(LoadableState<Int>.loaded(5).data == 5)
    #expect(LoadableState<Int>.absent.data == nil)
    #expect(LoadableState<Int>.loading.data == nil)
    #expect(LoadableState<Int>.error(EquatableError(code: 1)).data == nil)
  }

  @Test func dataOfAnOptionalValueKeepsTheInnerNil() {
    let state: LoadableState<Int?> = .loaded(nil)
    #expect(state.data == .some(nil))
    #expect(LoadableState<Int?>.absent.data == .none)
  }

  @Test func errorIsTheStoredErrorOnly() {
    #expect(LoadableState<Int>.error(EquatableError(code: 3)).error as? EquatableError == EquatableError(code: 3))
    #expect(LoadableState<Int>.absent.error == nil)
    #expect(LoadableState<Int>.loading.error == nil)
    #expect(LoadableState<Int>.loaded(1).error == nil)
  }

  // MARK: map / compactMap

  @Test func mapTransformsTheLoadedValue() {
    #expect(LoadableState<[Int]>.loaded([1, 2, 3]).map(\.count) == .loaded(3))
    #expect(LoadableState<Int>.loaded(2).map { String($0 * 10) } == .loaded("20"))
  }

  @Test func mapCarriesOtherCasesOverWithoutCallingTheTransform() {
    var calls = 0
    let transform: (Int) -> String = {
      calls += 1; return String($0)
    }
    #expect(LoadableState<Int>.absent.map(transform) == .absent)
    #expect(LoadableState<Int>.loading.map(transform) == .loading)
    #expect(LoadableState<Int>.error(EquatableError(code: 4)).map(transform) == .error(EquatableError(code: 4)))
    #expect(calls == 0)
  }

  @Test func mapRethrowsTheTransformsError() {
    #expect(throws: EquatableError(code: 9)) {
      _ = try LoadableState<Int>.loaded(1).map { _ -> Int in throw EquatableError(code: 9) }
    }
  }

  @Test func mapDoesNotThrowWhenTheTransformIsNotCalled() throws {
    let mapped = try LoadableState<Int>.loading.map { _ -> Int in throw EquatableError(code: 9) }
    #expect(mapped == .loading)
  }

  @Test func compactMapTransformsTheLoadedValue() {
    #expect(LoadableState<[Int]>.loaded([4, 5]).compactMap(\.first) == .loaded(4))
  }

  @Test func compactMapTurnsANilResultIntoAbsent() {
    #expect(LoadableState<[Int]>.loaded([]).compactMap(\.first) == .absent)
    #expect(LoadableState<String>.loaded("x").compactMap { Int($0) } == .absent)
  }

  @Test func compactMapCarriesOtherCasesOver() {
    #expect(LoadableState<[Int]>.absent.compactMap(\.first) == .absent)
    #expect(LoadableState<[Int]>.loading.compactMap(\.first) == .loading)
    #expect(LoadableState<[Int]>.error(EquatableError(code: 2)).compactMap(\.first) == .error(EquatableError(code: 2)))
  }

  @Test func compactMapRethrowsTheTransformsError() {
    #expect(throws: EquatableError(code: 8)) {
      _ = try LoadableState<Int>.loaded(1).compactMap { _ -> Int? in throw EquatableError(code: 8) }
    }
  }

  // MARK: Equality

  @Test func sameCasesWithoutPayloadAreEqual() {
    #expect(LoadableState<Int>.absent == .absent)
    #expect(LoadableState<Int>.loading == .loading)
  }

  @Test(arguments: [
    (LoadableState<Int>.absent, LoadableState<Int>.loading),
    (.loaded(1), .loading),
    (.loaded(1), .absent),
    (.loaded(1), .error(EquatableError(code: 1))),
    (.error(EquatableError(code: 1)), .loading),
    (.error(EquatableError(code: 1)), .absent),
  ])
  func differentCasesAreUnequal(lhs: LoadableState<Int>, rhs: LoadableState<Int>) {
    #expect(lhs != rhs)
    #expect(rhs != lhs)
  }

  @Test func loadedValuesAreCompared() {
    #expect(LoadableState<Item>.loaded(Item(name: "a")) == .loaded(Item(name: "a")))
    #expect(LoadableState<Item>.loaded(Item(name: "a")) != .loaded(Item(name: "b")))
  }

  @Test func equatableErrorsOfTheSameTypeAreCompared() {
    #expect(LoadableState<Int>.error(EquatableError(code: 1)) == .error(EquatableError(code: 1)))
    #expect(LoadableState<Int>.error(EquatableError(code: 1)) != .error(EquatableError(code: 2)))
  }

  @Test func nonEquatableErrorsOfTheSameTypeAreEqual() {
    #expect(LoadableState<Int>.error(PlainError(message: "a")) == .error(PlainError(message: "b")))
  }

  @Test func errorsOfDifferentTypesAreUnequal() {
    #expect(LoadableState<Int>.error(EquatableError(code: 1)) != .error(PlainError(message: "a")))
    #expect(LoadableState<Int>.error(CancelLoadable()) != .error(ResetLoadable()))
    #expect(LoadableState<Int>.error(TimeoutError()) == .error(TimeoutError()))
  }

  @Test func aSubclassErrorIsADifferentType() {
    #expect(LoadableState<Int>.error(BaseError()) == .error(BaseError()))
    #expect(LoadableState<Int>.error(SubError()) == .error(SubError()))
    #expect(LoadableState<Int>.error(BaseError()) != .error(SubError()))
    #expect(LoadableState<Int>.error(SubError()) != .error(BaseError()))
  }

  // MARK: Debug description

  @Test func debugDescriptions() {
    #expect(LoadableState<[Int]>.absent.debugDescription == "LoadableState.absent")
    #expect(LoadableState<[Int]>.loading.debugDescription == "LoadableState.loading")
    #expect(LoadableState<[Int]>.loaded([1, 2]).debugDescription == "LoadableState.loaded([1, 2])")
    #expect(LoadableState<String>.loaded("hi").debugDescription == #"LoadableState.loaded("hi")"#)
    #expect(LoadableState<Int>.error(TimeoutError()).debugDescription == "LoadableState.error(TimeoutError())")
    #expect(
      LoadableState<Int>.error(DescribedError()).debugDescription == "LoadableState.error(the network is down)")
    #expect(String(reflecting: LoadableState<Int>.loaded(3)) == "LoadableState.loaded(3)")
  }

  // MARK: Sendable

  @Test func crossesIsolationWhenValueIsSendable() async {
    let state: LoadableState<[Int]> = .loaded([1, 2])
    let copied = await Task.detached { state }.value
    #expect(copied == .loaded([1, 2]))
  }
}

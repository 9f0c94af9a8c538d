import Testing

@testable import Processed

@Suite struct ProcessStateTests {
  enum Action: Equatable, Sendable {
    case save, delete
  }

  private struct EquatableError: Error, Equatable {
    var code: Int
  }

  private struct PlainError: Error {
    var message: String
  }

  // MARK: start / finish / fail

  @Test(arguments: [
    ProcessState<Action>.idle, .running(.delete), .failed(process: .delete, error: PlainError(message: "x")),
    .finished(.delete),
  ])
  func startRunsTheProcessFromAnyState(initial: ProcessState<Action>) {
    var state = initial
    state.start(.save)
    #expect(state == .running(.save))
  }

  @Test func finishFinishesTheRunningProcess() {
    var state: ProcessState<Action> = .running(.save)
    state.finish()
    #expect(state == .finished(.save))
  }

  @Test func failFailsTheRunningProcess() {
    var state: ProcessState<Action> = .running(.delete)
    state.fail(with: EquatableError(code: 3))
    #expect(state == .failed(process: .delete, error: EquatableError(code: 3)))
  }

  @Test(arguments: [
    ProcessState<Action>.idle, .failed(process: .delete, error: EquatableError(code: 1)), .finished(.delete),
  ])
  func finishAndFailDoNothingUnlessRunning(initial: ProcessState<Action>) {
    var finished = initial
    finished.finish()
    #expect(finished == initial)

    var failed = initial
    failed.fail(with: EquatableError(code: 2))
    #expect(failed == initial)
  }

  // MARK: Mutators

  @Test func setIdle() {
    var state: ProcessState<Action> = .running(.save)
    state.setIdle()
    #expect(state == .idle)
  }

  @Test func setRunning() {
    var state: ProcessState<Action> = .finished(.save)
    state.setRunning(.delete)
    #expect(state == .running(.delete))
  }

  @Test func setFailedWorksFromAnyState() {
    var state: ProcessState<Action> = .idle
    state.setFailed(.save, error: EquatableError(code: 5))
    #expect(state == .failed(process: .save, error: EquatableError(code: 5)))
  }

  @Test func setFinishedWorksFromAnyState() {
    var state: ProcessState<Action> = .idle
    state.setFinished(.delete)
    #expect(state == .finished(.delete))
  }

  // MARK: SingleProcess forms

  @Test func startWithoutArgumentRunsAFreshProcessEachTime() throws {
    var state: SingleProcessState = .idle
    state.start()
    let first = try #require(state.process)
    #expect(state == .running(first))
    state.start()
    let second = try #require(state.process)
    #expect(state == .running(second))
    #expect(first != second)
  }

  @Test func finishAndFailKeepTheRunningSingleProcess() throws {
    var state: SingleProcessState = .idle
    state.start()
    let process = try #require(state.process)
    state.finish()
    #expect(state == .finished(process))

    state.start(process)
    state.fail(with: EquatableError(code: 1))
    #expect(state == .failed(process: process, error: EquatableError(code: 1)))
  }

  @Test func setRunningWithoutArgumentUsesAFreshProcess() throws {
    var state: SingleProcessState = .running(SingleProcess(id: "old"))
    state.setRunning()
    let process = try #require(state.process)
    #expect(state.isRunning)
    #expect(process != SingleProcess(id: "old"))
    #expect(process.id.first == "#")
  }

  @Test func setFailedWithUsesAFreshProcess() throws {
    var state: SingleProcessState = .running(SingleProcess(id: "old"))
    state.setFailed(with: EquatableError(code: 4))
    let process = try #require(state.process)
    #expect(process != SingleProcess(id: "old"))
    #expect(state == .failed(process: process, error: EquatableError(code: 4)))
  }

  @Test func setFinishedWithoutArgumentUsesAFreshProcess() throws {
    var state: SingleProcessState = .running(SingleProcess(id: "old"))
    state.setFinished()
    let process = try #require(state.process)
    #expect(process != SingleProcess(id: "old"))
    #expect(state == .finished(process))
  }

  // MARK: Queries

  @Test(arguments: [
    (ProcessState<Action>.idle, [true, false, false, false]),
    (.running(.save), [false, true, false, false]),
    (.failed(process: .save, error: PlainError(message: "x")), [false, false, true, false]),
    (.finished(.save), [false, false, false, true]),
  ])
  func caseQueries(state: ProcessState<Action>, expected: [Bool]) {
    #expect([state.isIdle, state.isRunning, state.hasFailed, state.hasFinished] == expected)
  }

  @Test func processTakingQueriesCompareTheProcess() {
    let running: ProcessState<Action> = .running(.save)
    #expect(running.isRunning(.save))
    #expect(!running.isRunning(.delete))
    #expect(!running.hasFailed(.save))
    #expect(!running.hasFinished(.save))

    let failed: ProcessState<Action> = .failed(process: .delete, error: PlainError(message: "x"))
    #expect(failed.hasFailed(.delete))
    #expect(!failed.hasFailed(.save))
    #expect(!failed.isRunning(.delete))
    #expect(!failed.hasFinished(.delete))

    let finished: ProcessState<Action> = .finished(.save)
    #expect(finished.hasFinished(.save))
    #expect(!finished.hasFinished(.delete))
    #expect(!finished.isRunning(.save))
    #expect(!finished.hasFailed(.save))

    let idle: ProcessState<Action> = .idle
    #expect(!idle.isRunning(.save))
    #expect(!idle.hasFailed(.save))
    #expect(!idle.hasFinished(.save))
  }

  @Test func processIsThePayloadOfEveryCaseButIdle() {
    #expect(ProcessState<Action>.idle.process == nil)
    #expect(ProcessState<Action>.running(.save).process == .save)
    #expect(ProcessState<Action>.failed(process: .delete, error: PlainError(message: "x")).process == .delete)
    #expect(ProcessState<Action>.finished(.save).process == .save)
  }

  @Test func errorIsTheFailureOnly() {
    let failed: ProcessState<Action> = .failed(process: .save, error: EquatableError(code: 6))
    #expect(failed.error as? EquatableError == EquatableError(code: 6))
    #expect(ProcessState<Action>.idle.error == nil)
    #expect(ProcessState<Action>.running(.save).error == nil)
    #expect(ProcessState<Action>.finished(.save).error == nil)
  }

  // MARK: Equality

  @Test func sameCasesCompareTheirProcesses() {
    #expect(ProcessState<Action>.idle == .idle)
    #expect(ProcessState<Action>.running(.save) == .running(.save))
    #expect(ProcessState<Action>.running(.save) != .running(.delete))
    #expect(ProcessState<Action>.finished(.save) == .finished(.save))
    #expect(ProcessState<Action>.finished(.save) != .finished(.delete))
  }

  @Test(arguments: [
    (ProcessState<Action>.idle, ProcessState<Action>.running(.save)),
    (.running(.save), .finished(.save)),
    (.running(.save), .failed(process: .save, error: EquatableError(code: 1))),
    (.finished(.save), .failed(process: .save, error: EquatableError(code: 1))),
    (.idle, .finished(.save)),
  ])
  func differentCasesAreUnequal(lhs: ProcessState<Action>, rhs: ProcessState<Action>) {
    #expect(lhs != rhs)
    #expect(rhs != lhs)
  }

  @Test func failuresCompareProcessAndError() {
    typealias State = ProcessState<Action>
    #expect(
      State.failed(process: .save, error: EquatableError(code: 1))
        == .failed(process: .save, error: EquatableError(code: 1)))
    #expect(
      State.failed(process: .save, error: EquatableError(code: 1))
        != .failed(process: .save, error: EquatableError(code: 2)))
    #expect(
      State.failed(process: .save, error: EquatableError(code: 1))
        != .failed(process: .delete, error: EquatableError(code: 1)))
    #expect(
      State.failed(process: .save, error: PlainError(message: "a"))
        == .failed(process: .save, error: PlainError(message: "b")))
    #expect(
      State.failed(process: .save, error: PlainError(message: "a"))
        != .failed(process: .delete, error: PlainError(message: "a")))
    #expect(
      State.failed(process: .save, error: PlainError(message: "a"))
        != .failed(process: .save, error: EquatableError(code: 1)))
    #expect(State.failed(process: .save, error: CancelProcess()) != .failed(process: .save, error: ResetProcess()))
  }

  // MARK: Debug description

  @Test func debugDescriptions() {
    #expect(ProcessState<Action>.idle.debugDescription == "ProcessState.idle")
    #expect(ProcessState<String>.running("save").debugDescription == #"ProcessState.running("save")"#)
    #expect(ProcessState<Int>.finished(3).debugDescription == "ProcessState.finished(3)")
    #expect(
      SingleProcessState.failed(process: SingleProcess(id: "a"), error: TimeoutError()).debugDescription
        == #"ProcessState.failed(process: SingleProcess(id: "a"), error: TimeoutError())"#)
    #expect(
      SingleProcessState.running(SingleProcess(id: "b")).debugDescription
        == #"ProcessState.running(SingleProcess(id: "b"))"#)
  }

  // MARK: Sendable

  @Test func crossesIsolationWhenProcessKindIsSendable() async {
    let state: SingleProcessState = .finished(SingleProcess(id: "x"))
    let copied = await Task.detached { state }.value
    #expect(copied == .finished(SingleProcess(id: "x")))
  }
}

import Testing

@testable import Processed

@Suite struct ControlErrorTests {
  @Test func eachErrorEqualsAFreshInstanceOfItself() {
    #expect(CancelLoadable() == CancelLoadable())
    #expect(ResetLoadable() == ResetLoadable())
    #expect(CancelProcess() == CancelProcess())
    #expect(ResetProcess() == ResetProcess())
    #expect(TimeoutError() == TimeoutError())
  }

  @Test func eachErrorHashesTheSameAsAFreshInstance() {
    #expect(Set([CancelLoadable(), CancelLoadable()]).count == 1)
    #expect(Set([ResetLoadable(), ResetLoadable()]).count == 1)
    #expect(Set([CancelProcess(), CancelProcess()]).count == 1)
    #expect(Set([ResetProcess(), ResetProcess()]).count == 1)
    #expect(Set([TimeoutError(), TimeoutError()]).count == 1)
    #expect(CancelLoadable().hashValue == CancelLoadable().hashValue)
    #expect(TimeoutError().hashValue == TimeoutError().hashValue)
  }

  @Test func theErrorsAreDistinctFromEachOther() {
    let errors: [any Error] = [CancelLoadable(), ResetLoadable(), CancelProcess(), ResetProcess(), TimeoutError()]
    for (i, lhs) in errors.enumerated() {
      for (j, rhs) in errors.enumerated() {
        #expect(errorsAreEqual(lhs, rhs) == (i == j), "\(lhs) vs \(rhs)")
      }
    }
  }

  @Test func theErrorsCanBeThrownAndCaughtByType() {
    #expect(throws: CancelLoadable()) { throw CancelLoadable() }
    #expect(throws: ResetLoadable()) { throw ResetLoadable() }
    #expect(throws: CancelProcess()) { throw CancelProcess() }
    #expect(throws: ResetProcess()) { throw ResetProcess() }
    #expect(throws: TimeoutError()) { throw TimeoutError() }
  }

  @Test func theErrorsAreSendable() async {
    let error: any Error & Sendable = TimeoutError()
    let received = await Task.detached { error }.value
    #expect(received as? TimeoutError == TimeoutError())
  }
}

/// What a block run in a task of its own (beside a timeout) ended with.
@usableFromInline
struct AttemptResult<State: Sendable>: Sendable {
  @usableFromInline let outcome: LoadOutcome<State>
  @usableFromInline let thrown: (any Error)?

  @inlinable
  init(outcome: LoadOutcome<State>, thrown: (any Error)?) {
    self.outcome = outcome
    self.thrown = thrown
  }
}

extension LoadPhases.Next {
  @usableFromInline
  var isAttempt: Bool {
    if case .attempt = self { return true }
    return false
  }
}

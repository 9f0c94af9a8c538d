/// Whether two errors count as equal inside ``LoadableState`` and ``ProcessState``.
///
/// The rule: two errors are equal when they have the same dynamic type and, if that type is `Equatable`, its `==`
/// says they are equal. Errors of the same type that is not `Equatable` are equal (the type is all that can be
/// compared); errors of different dynamic types are never equal, even when both are `Equatable` (a subclass and its
/// superclass count as different types).
///
/// The dynamic types are compared first; then `lhs` is opened as `any Equatable` and `rhs` is cast to the same
/// concrete type, so the type's own `==` decides.
///
/// - Parameters:
///   - lhs: The first error.
///   - rhs: The second error.
/// - Returns: `true` when the errors are equal under the rule above.
func errorsAreEqual(_ lhs: any Error, _ rhs: any Error) -> Bool {
  guard ObjectIdentifier(type(of: lhs)) == ObjectIdentifier(type(of: rhs)) else { return false }
  guard let equatableLHS = lhs as? any Equatable else { return true }
  return isEqual(equatableLHS, to: rhs)
}

/// Compares an opened `Equatable` value with an error of (expectedly) the same concrete type.
///
/// - Parameters:
///   - lhs: The opened left-hand side.
///   - rhs: The right-hand side; it is cast to `LHS`.
/// - Returns: `lhs == rhs` when `rhs` is an `LHS`, otherwise `false`.
private func isEqual<LHS: Equatable>(_ lhs: LHS, to rhs: any Error) -> Bool {
  guard let rhs = rhs as? LHS else { return false }
  return lhs == rhs
}

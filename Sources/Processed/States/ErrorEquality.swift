/// Whether two errors count as equal inside ``LoadableState`` and ``ProcessState``: the same dynamic type and, if that
/// type is `Equatable`, equal by its `==`.
///
/// Errors of different dynamic types (a subclass and its superclass too) are never equal.
func errorsAreEqual(_ lhs: any Error, _ rhs: any Error) -> Bool {
  guard ObjectIdentifier(type(of: lhs)) == ObjectIdentifier(type(of: rhs)) else { return false }
  guard let equatableLHS = lhs as? any Equatable else { return true }
  return isEqual(equatableLHS, to: rhs)
}

/// Whether two values are known to be equal: of one `Equatable` type (a conditional conformance counts) and equal by
/// its `==`. Values of a type that is not `Equatable` are never known to be equal.
func valuesAreKnownEqual(_ lhs: Any, _ rhs: Any) -> Bool {
  guard let equatableLHS = lhs as? any Equatable else { return false }
  return isEqual(equatableLHS, to: rhs)
}

/// Compares an opened `Equatable` value with a value of (expectedly) the same concrete type.
///
/// - Parameters:
///   - lhs: The opened left-hand side.
///   - rhs: The right-hand side; it is cast to `LHS`.
/// - Returns: `lhs == rhs` when `rhs` is an `LHS`, otherwise `false`.
private func isEqual<LHS: Equatable>(_ lhs: LHS, to rhs: Any) -> Bool {
  guard let rhs = rhs as? LHS else { return false }
  return lhs == rhs
}

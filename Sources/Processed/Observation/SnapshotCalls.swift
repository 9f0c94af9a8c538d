/// The observers in an ``ObserverSnapshot``: the slot's one observer, or its array of several.
///
/// One word (both payloads are references, and the cases fit in their spare bits), and not generic, so that
/// destroying a snapshot is one release rather than two, and never goes through value witnesses.
@usableFromInline
enum SnapshotCalls {
  case none
  case one(ObserverCall)
  case several(ContiguousArray<ObserverCall>)

  /// The one observer, unretained (the snapshot holds it).
  ///
  /// Read through this property rather than bound by a `switch` in ``ObserverSnapshot/deliver(_:)``: a payload bound
  /// there is retained around the observer's call and released after it (measured: a retain and a release per
  /// notification); here the copy and its release are adjacent, and the optimizer removes both.
  @inlinable
  var single: Unmanaged<ObserverCall>? {
    if case .one(let call) = self { return .passUnretained(call) }
    return nil
  }
}

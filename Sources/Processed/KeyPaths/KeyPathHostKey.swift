/// Identifies a state by instance and key path in the table of running key-path loads.
@usableFromInline
struct KeyPathHostKey: Hashable {
  @usableFromInline let instance: ObjectIdentifier
  @usableFromInline let keyPath: AnyKeyPath

  @inlinable
  init(_ instance: AnyObject, _ keyPath: AnyKeyPath) {
    self.instance = ObjectIdentifier(instance)
    self.keyPath = keyPath
  }
}

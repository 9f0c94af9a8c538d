/// Which state a cache binding belongs to: a wrapper's storage (`keyPath` is `nil`), or a key path of an instance.
@usableFromInline
struct BoundStateID: Hashable {
  @usableFromInline let instance: ObjectIdentifier
  @usableFromInline let keyPath: AnyKeyPath?

  @usableFromInline
  init(_ instance: AnyObject, _ keyPath: AnyKeyPath?) {
    self.instance = ObjectIdentifier(instance)
    self.keyPath = keyPath
  }
}

/// A state bound to a cache entry, whatever its value type (what ``CacheBindings`` holds).
@MainActor
class AnyCacheBinding {
  let id: BoundStateID

  init(id: BoundStateID) {
    self.id = id
  }

  /// Leaves the entry (the state keeps showing what it shows).
  func unbind() { fatalError("abstract") }
}

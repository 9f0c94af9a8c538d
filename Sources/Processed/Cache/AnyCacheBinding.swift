/// A state bound to a cache entry, whatever its value type (what ``CacheBindings`` holds).
@usableFromInline @MainActor
class AnyCacheBinding {
  @usableFromInline let id: BoundStateID

  init(id: BoundStateID) {
    self.id = id
  }

  /// Leaves the entry (the state keeps showing what it shows).
  func unbind() { fatalError("abstract") }
}

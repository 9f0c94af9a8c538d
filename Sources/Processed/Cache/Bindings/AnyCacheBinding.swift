/// A state bound to a cache entry, whatever its value type (what ``CacheBindings`` holds).
@usableFromInline @MainActor
class AnyCacheBinding {
  @usableFromInline let id: BoundStateID
  /// Whether the state keeps this binding itself (a wrapper's storage): then ``CacheBindings`` counts it while it is
  /// bound instead of keeping it in its table.
  @usableFromInline let isKeptByState: Bool

  init(id: BoundStateID, keptByState: Bool = false) {
    self.id = id
    isKeptByState = keptByState
  }

  /// Whether the state is bound to an entry.
  @usableFromInline var isBound: Bool { fatalError("abstract") }

  /// Leaves the entry (the state keeps showing what it shows).
  @usableFromInline func unbind() { fatalError("abstract") }

  /// Whether the state's owner is still there. A binding whose owner is gone may share its id with a newer state at
  /// the same address, which it must not be taken for.
  @usableFromInline var isAlive: Bool { fatalError("abstract") }

  /// A `loadMore` of the bound state, whose plan (``PageLoad/plan(after:_:)``, `nil`: no next page) is type-erased:
  /// the entry fetches the page for every state bound to it. Returns the state's task, `nil` when the call does
  /// nothing.
  func loadMore(_ plan: Any?, options: LoadOptions?, priority: TaskPriority?) -> Task<Void, Never>? {
    fatalError("abstract")
  }
}

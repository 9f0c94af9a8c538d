internal import CProcessedAtomics

/// The states bound to a ``LoadCache`` entry, by state, so that a state's next load, `cancel()`, `reset()` or manual
/// write unbinds it (the engine calls ``stateWillChange(_:)`` from `launch` and `cancelLoad` while any state is
/// bound). Main-actor only; its statics are `@exclusivity(unchecked)` under Unsafe/README.md's invariant 1.
@usableFromInline @MainActor
enum CacheBindings {
  /// The binding of each bound state.
  @usableFromInline @exclusivity(unchecked) static var table: [BoundStateID: AnyCacheBinding] = [:] {
    didSet { processed_cache_set_bound_states(UInt32(truncatingIfNeeded: table.count)) }
  }
  /// The state whose next unbinding hook is the cache's own call (see ``asCache(_:_:)``).
  @usableFromInline @exclusivity(unchecked) static var spared: BoundStateID?

  /// A state is about to start a load, be cancelled, reset or written by hand: it leaves its entry.
  @usableFromInline
  static func stateWillChange<Host: StateHost>(_ host: Host) {
    guard let id = host.cacheIdentity else { return }
    stateWillChange(id)
  }

  /// A key-path state with no running load is cancelled or reset: it leaves its entry.
  @usableFromInline
  static func stateWillChange(_ id: BoundStateID) {
    if spared == id {
      spared = nil
      return
    }
    // Read first, then called: the table's access ends before the unbinding changes it.
    if let binding = table[id] { binding.unbind() }
  }

  /// Runs `body`, a call of the cache's own on the state `id` (a write, a load that waits for the entry): its first
  /// unbinding hook — the call's own, which comes before any observer runs — leaves the state bound. What observers
  /// do meanwhile unbinds as usual.
  @inlinable
  static func asCache<R>(_ id: BoundStateID, _ body: () -> R) -> R {
    let outer = spared
    spared = id
    defer { spared = outer }
    return body()
  }
}

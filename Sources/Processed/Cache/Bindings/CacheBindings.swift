internal import CProcessedAtomics

/// The states bound to a ``LoadCache`` entry, so that a state's next load, `cancel()`, `reset()` or manual write
/// unbinds it (through the engine's `stateWillChange()` hook, from `launch` and `cancelLoad`: StateHost+CacheHooks.swift). A
/// wrapper's storage keeps its binding itself and is only counted; other states' bindings are kept in ``table``.
/// Main-actor only; its statics are `@exclusivity(unchecked)` under Unsafe/README.md's invariant 1.
@usableFromInline @MainActor
enum CacheBindings {
  /// The binding of each bound state that does not keep its binding itself (a key-path state).
  @usableFromInline @exclusivity(unchecked) static var table: [BoundStateID: AnyCacheBinding] = [:] {
    didSet { publishCount() }
  }
  /// How many states that keep their binding are bound.
  @usableFromInline @exclusivity(unchecked) static var keptBound = 0 {
    didSet { publishCount() }
  }

  /// Tells the engine how many states are bound (it skips the unbinding hook while none is).
  static func publishCount() {
    processed_cache_set_bound_states(UInt32(truncatingIfNeeded: table.count + keptBound))
  }

  /// `binding`'s state was bound to an entry.
  @inlinable
  static func add(_ binding: AnyCacheBinding) {
    if binding.isKeptByState {
      keptBound += 1
    } else {
      table[binding.id] = binding
    }
  }

  /// `binding`'s state left its entry.
  static func remove(_ binding: AnyCacheBinding) {
    if binding.isKeptByState {
      keptBound -= 1
      return
    }
    // Removed, and put back in the rare case the table holds another binding of the same id: one lookup.
    if let removed = table.removeValue(forKey: binding.id), removed !== binding {
      table[binding.id] = removed
    }
  }

  /// The binding through which `binding`'s state is bound now, if it is bound (for a state that keeps its binding,
  /// `binding` itself).
  @inlinable
  static func current(of binding: AnyCacheBinding) -> AnyCacheBinding? {
    if binding.isKeptByState { return binding.isBound ? binding : nil }
    return table[binding.id]
  }
  /// The state whose next unbinding hook is the cache's own call (see ``asCache(_:_:)``).
  @usableFromInline @exclusivity(unchecked) static var spared: BoundStateID?

  /// A state that keeps its binding (a wrapper's storage) is about to start a load, be cancelled, reset or written
  /// by hand: it leaves its entry.
  @usableFromInline
  static func stateWillChange(keeping binding: AnyCacheBinding) {
    if spared == binding.id {
      spared = nil
      return
    }
    binding.unbind()
  }

  /// The storage that keeps `binding` went away (its `deinit`, on any thread): the binding leaves its entry — at once
  /// on the main actor, else at the main actor's next turn.
  nonisolated static func stateWentAway(_ binding: AnyCacheBinding) {
    if MainQueue.isCurrent {
      MainActor.assumeIsolated { binding.unbind() }
    } else {
      Task { @MainActor in binding.unbind() }
    }
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

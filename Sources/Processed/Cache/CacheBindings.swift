internal import CProcessedAtomics

/// The states bound to a ``LoadCache`` entry, by state, so that a state's next load, `cancel()`, `reset()` or manual
/// write unbinds it (the engine calls ``stateWillChange(_:)`` from `launch` and `cancelLoad` while any state is
/// bound). Main-actor only.
@usableFromInline @MainActor
enum CacheBindings {
  /// The binding of each bound state.
  static var table: [BoundStateID: AnyCacheBinding] = [:] {
    didSet { processed_cache_set_bound_states(UInt32(truncatingIfNeeded: table.count)) }
  }
  /// Set while the cache itself starts or writes a bound state's load, which must not unbind it.
  static var isCacheWriting = false

  /// A state is about to start a load, be cancelled, reset or written by hand: it leaves its entry.
  @usableFromInline
  static func stateWillChange<Host: StateHost>(_ host: Host) {
    guard !isCacheWriting, let id = host.cacheIdentity, let binding = table[id] else { return }
    binding.unbind()
  }

  /// A key-path state with no running load is cancelled or reset: it leaves its entry.
  @usableFromInline
  static func stateWillChange(_ id: BoundStateID) {
    guard !isCacheWriting, let binding = table[id] else { return }
    binding.unbind()
  }

  /// Runs `body` as the cache: loads it starts and states it writes stay bound.
  static func asCache<R>(_ body: () -> R) -> R {
    let outer = isCacheWriting
    isCacheWriting = true
    defer { isCacheWriting = outer }
    return body()
  }
}

public import CProcessedAtomics

/// How the cache plugs into the engine: the two ``StateHost`` hooks, implemented here for the hosts a user's state has
/// (a wrapper's storage keeps its binding; a key path's binding is in ``CacheBindings/table``). The engine names no
/// cache type; while no state is bound (a counter the bindings keep), each hook is one atomic load.
extension StateStorage {
  /// The storage is about to start a load, be cancelled, reset or written by hand: it leaves its entry, unless the
  /// change is the cache's own call (``CacheBindings/asCache(_:_:)``).
  @inlinable @inline(__always)
  func stateWillChange() {
    guard processed_cache_bound_states() != 0, let cacheBinding, cacheBinding.isBound else { return }
    CacheBindings.stateWillChange(keeping: cacheBinding)
  }

  /// A bound storage's `loadMore` goes through its entry (the entry keeps the list and fetches its pages).
  @usableFromInline
  func loadMoreThroughHook(
    _ plan: LoadPlan<State>?, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never>?? {
    guard processed_cache_bound_states() != 0, let cacheBinding, cacheBinding.isBound else { return .none }
    return .some(cacheBinding.loadMore(plan, options: options, priority: priority))
  }
}

extension KeyPathHost {
  @inlinable
  func stateWillChange() {
    guard processed_cache_bound_states() != 0 else { return }
    CacheBindings.stateWillChange(BoundStateID(model, key.keyPath))
  }

  @usableFromInline
  func loadMoreThroughHook(
    _ plan: LoadPlan<State>?, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never>?? {
    guard processed_cache_bound_states() != 0,
      let binding = CacheBindings.table[BoundStateID(model, key.keyPath)]
    else { return .none }
    // The binding of a state that is gone, whose address this state now has: not this state's.
    guard binding.isAlive else {
      binding.unbind()
      return .none
    }
    return .some(binding.loadMore(plan, options: options, priority: priority))
  }
}

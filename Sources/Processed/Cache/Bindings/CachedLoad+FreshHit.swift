extension CachedLoad {
  /// A fresh hit of a wrapper's state that is bound to `key`'s entry already (a screen loading its key again), done
  /// as the general path does it — the state moves last among the entry's states, the entry records the call's block
  /// until it has fetched, `.loaded(value)` is written as the cache — without building a call or looking the key up.
  /// Inlined into the caller so that it runs specialized. Returns `false`, having done nothing, in any other case;
  /// the general path then runs.
  @inlinable
  static func freshHit<Value>(
    _ storage: StateStorage<LoadableState<Value>>, key: CacheKey<Value>, cache: LoadCache, options: LoadOptions?,
    block: @escaping @MainActor () async throws -> Value
  ) -> Bool {
    // The calls made off the main actor before this one take effect first.
    cache.store.runQueuedCalls()
    // A running load of the state is the general path's (`.joinRunning`, or the write ending it).
    guard !storage.tracker.isRunning, let binding: StorageCacheBinding<Value> = storage.keptCacheBinding() else {
      return false
    }
    // The storage's own binding, bound while its entry is set. A bound entry is in its cache (leaving the cache
    // unbinds its states), so it is the key's entry when its cache (told by its clock) and its key are the call's;
    // its `Value` type is the binding's.
    guard let entry = binding.entry, entry.clock === cache.clock, let value = entry.value,
      key.storage.matches(entry.key.storage)
    else { return false }
    // A debounced call starts later: the general path's.
    let optionsGiven = options != nil
    if optionsGiven {
      guard options?.debounce == nil else { return false }
    } else if storage.declaredOptions?.shapesTheStart == true {
      return false
    }
    let staleTime = Freshness.staleTime(given: options, declared: storage.declaredOptions, cache: cache.staleTime)
    guard
      Freshness.isFresh(
        writtenAt: entry.writtenAt, invalidated: entry.invalidated, staleTime: staleTime, now: entry.clock.now())
    else { return false }
    entry.moveToEnd(binding)
    if !entry.hasFetched { entry.record(block, options: optionsGiven ? options : storage.declaredOptions?.options) }
    // What `overwrite` does as the cache when no load runs: the write, without the unbinding hook (the state stays
    // bound), so observers' own loads, cancels and resets unbind it as usual. With no load running, the activity
    // changes only when a kept error is cleared.
    let clearsError = storage.activityRecord?.lastError != nil
    if clearsError { storage.keepError(nil) }
    // A state that shows the entry's value already (written by the entry, bound since) is not written again.
    if binding.shownVersion != entry.version {
      storage.store(.loaded(value))
      binding.shownVersion = entry.version
    }
    if clearsError { storage.publishActivity() }
    return true
  }

  /// The task a call returns when it is done at once (a fresh hit).
  @usableFromInline
  static var finishedTask: Task<Void, Never> { KeyPathTargetEnded.task }
}

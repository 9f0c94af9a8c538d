extension CacheEntry {
  /// ``drop()``, specialized where the value type is known (`LoadCache.remove`).
  @inlinable
  final func dropEntry() {
    if callers != nil, isFetching {
      // Callers wait for the fetch: it runs on for them, answers them, and writes nothing here.
      detachCallers()
    } else {
      cancelLoad()
    }
    callers = nil
    // Taken from the end, one by one: no copy of the list, no new list to make.
    while let binding = bindings.popLast() { detach(binding) }
    store.boundEntries[ObjectIdentifier(self)] = nil
    revalidation?.stopPolling()
  }
}

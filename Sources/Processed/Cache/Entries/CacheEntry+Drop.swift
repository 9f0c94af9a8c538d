extension CacheEntry {
  /// ``drop()``, specialized where the value type is known (`LoadCache.remove`).
  @inlinable
  final func dropEntry() {
    if callers != nil, isFetching {
      // Callers wait for the fetch: it runs on for them, answers them, and writes nothing here.
      detachCallers()
    } else {
      cancelLoad()
      // Callers with no fetch in flight to answer them would wait forever: they end as cancelled. (Checked first: the
      // error is an allocation.)
      if callers != nil { endCallers(.failure(CancellationError())) }
    }
    // Taken from the end, one by one: no copy of the list, no new list to make.
    while let binding = bindings.popLast() { detach(binding) }
    store.boundEntries[ObjectIdentifier(self)] = nil
    revalidation?.stopPolling()
  }
}

internal import CProcessedAtomics

/// Persisted keys (``CacheKey/persisted()``): an entry's record is read by the first load of its key and written after
/// each fetch or `set` (see ``CachePersistence``).
extension CacheStore {
  /// `entry` was touched by a persisted key: it keeps the key's name from now (when the cache has a storage), and
  /// reads its record before its first load when `restoring` (the entry was just made for that key).
  @usableFromInline @MainActor
  func adopt<V>(_ key: KeyPersistence<V>, by entry: CacheEntry<V>, restoring: Bool) {
    guard persistence != nil else { return }
    entry.persisted = EntryPersistence(key: key, restoring: restoring)
  }

  /// ``LoadCache/flush()``.
  @MainActor
  func flush() async {
    await persistence?.flush()
  }

  /// `remove(key)`: the record of the key (persisted, or equal to a key that persisted its entry) is removed.
  @usableFromInline @MainActor
  func removeRecord<V>(of key: CacheKey<V>, _ erased: AnyCacheKey) {
    guard let name = key.storageName ?? entry(for: erased, of: V.self)?.persisted?.key.name else { return }
    persistence?.remove(name)
  }

  /// Whether a load of `key` must wait for its record first: the key is persisted, and its entry is not in memory or
  /// is reading its record.
  @usableFromInline @MainActor
  func needsRestore<V>(_ key: CacheKey<V>) -> Bool {
    guard persistence != nil else { return false }
    guard let entry = entry(for: key) else { return true }
    return entry.persisted?.isRestoring ?? false
  }

  /// Reads the record of `key` into its entry, once: the first caller starts the read (off the main actor), later
  /// ones join it. Returns when the read ended, or at once when the calling task is cancelled.
  ///
  /// A restored value is stale (it is from an earlier launch) and never overwrites a value written meanwhile (by a
  /// `set` or a fetch that ended first); a superseded restore is not reported.
  @MainActor
  func restore<V>(_ key: CacheKey<V>) async {
    guard let persistence, key.persistence != nil else { return }
    let entry = makeEntry(for: key)
    guard let persisted = entry.persisted else { return }
    switch persisted.restore {
    case .done:
      return
    case .reading:
      break
    case .needed:
      persisted.restore = .reading
      let version = entry.version
      // Its own task: a caller that is cancelled stops waiting, the read goes on for the others. It holds the entry
      // until the read ends.
      Task { [self] in
        let value = await persistence.read(persisted.key)
        if let value, entry.version == version, storedEntry(entry.key) === entry {
          entry.restored(value)
          persistence.events.yield(.restored(persisted.key.name))
        }
        persisted.readEnded()
      }
    }
    let signal = FirstSignal<Bool>()
    persisted.waiters.append(signal)
    await LoadJoin.wait(until: signal)
    // The next waiting load goes on once this one has acted (the rest of this turn of the main actor).
    persisted.resumeNext()
  }
}

extension CacheEntry {
  /// Stores `value` (written by a fetch or `set`) under the entry's name.
  @usableFromInline
  func store(_ value: Value, as persisted: EntryPersistence<Value>) {
    persisted.restore = .done
    store.persistence?.write(value, for: persisted.key)
  }

  /// Shows a value read from storage: stale (from an earlier launch), written to the entry and to any bound state
  /// without ending its wait; never stored again.
  func restored(_ newValue: Value) {
    value = newValue
    version = processed_next_cache_version()
    writtenAt = clock.now()
    invalidated = true
    if isPublished { publishValue() }
    deliverToBindings(.loaded(newValue), endingWaits: false)
    noteIfIdle(written: true)
  }
}

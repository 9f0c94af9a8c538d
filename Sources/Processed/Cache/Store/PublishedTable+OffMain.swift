/// The published table's bookkeeping of misses decided off the main actor (`CacheStore+OffMainFetches.swift`): work
/// the main actor takes over, and outcomes that expire.
extension PublishedTable {
  /// The main actor took `work`, `key`'s, out of ``offMain`` to make the key's entry from it (in this turn): until then
  /// the key's misses go to the main actor. Returns whether its outcome expired instead — it ended before
  /// `expiredBefore` (`gcTime` ago), so its row goes and no entry is made, as the sweeper would have dropped it.
  mutating func tookOffMain(_ work: any OffMainWork, _ key: PublishedKey, expiredBefore: Duration) -> Bool {
    if let endedAt = work.endedAt, endedAt <= expiredBefore {
      rows[key] = nil
      return true
    }
    if rows[key] == nil { rows[key] = PublishedValue.absent }
    work.willBeAdopted()
    return false
  }

  /// The deadline of the oldest outcome still in ``offMain``; `nil` when none is left, and the sweeper stops.
  mutating func nextExpiry() -> Duration? {
    while expiringHead < expiring.count {
      let item = expiring[expiringHead]
      if let work = offMain[item.key], work.endedStamp == item.stamp { return item.deadline }
      expiringHead += 1
    }
    stopSweeping()
    return nil
  }

  /// ``dropExpired(before:)`` of the oldest outcome alone (a fetch's end drops one, without allocating).
  @usableFromInline
  mutating func dropFirstExpired(before time: Duration) -> (any OffMainWork)? {
    while expiringHead < expiring.count, expiring[expiringHead].deadline < time {
      let item = expiring[expiringHead]
      expiringHead += 1
      guard let work = offMain[item.key], work.endedStamp == item.stamp else { continue }
      // The key has no entry (it is in `offMain`): its row is the outcome's.
      offMain[item.key] = nil
      rows[item.key] = nil
      return work
    }
    return nil
  }

  /// Drops the outcomes whose deadline is before `time` from ``offMain`` and ``rows``, and returns them.
  @usableFromInline
  mutating func dropExpired(before time: Duration) -> [any OffMainWork] {
    var dropped: [any OffMainWork] = []
    while let work = dropFirstExpired(before: time) { dropped.append(work) }
    if expiringHead > 0, expiringHead * 2 >= expiring.count {
      expiring.removeFirst(expiringHead)
      expiringHead = 0
    }
    return dropped
  }

  /// No sweeper runs any more.
  mutating func stopSweeping() {
    isSweeping = false
    sweeper = nil
    expiring.removeAll()
    expiringHead = 0
  }
}

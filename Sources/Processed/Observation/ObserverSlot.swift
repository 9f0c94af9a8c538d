/// One observed property's observers inside an ``ObserverRegistry``.
///
/// A slot is resolved once — when an observer registers or a writer first connects — so that writes notify by
/// reference and never hash a key path. Slots are never removed from their registry (a property does not stop
/// existing); only their entries are, so a writer may cache a slot for as long as it holds the registry.
///
/// The observers (`entries`) are read and written only while the registry's lock is held; the delivery state only on
/// the main actor.
class AnyObserverSlot: @unchecked Sendable {
  /// Removes the entry with `id`; returns whether it was there.
  func remove(id: UInt64) -> Bool { fatalError("abstract") }
  /// Whether an entry with `id` is registered.
  func contains(id: UInt64) -> Bool { fatalError("abstract") }
  /// Removes every entry and returns their end-of-registry hooks.
  func removeAll() -> [@Sendable () -> Void] { fatalError("abstract") }
  /// The number of registered entries.
  var count: Int { fatalError("abstract") }
}

/// The typed observers of one property. Ids grow monotonically and entries are appended, so `entries` stays sorted
/// by id and lookups are binary searches.
final class ObserverSlot<Value>: AnyObserverSlot, DeliversInOrder, @unchecked Sendable {
  struct Entry {
    let id: UInt64
    let handler: @MainActor (Value) -> Void
    /// Called when the registry goes away while this entry is still registered (an `AsyncStream` finishes here).
    let onRegistryEnd: (@Sendable () -> Void)?
  }

  var entries: ContiguousArray<Entry> = []

  /// Used only on the main actor, never under the lock (see `DeliversInOrder`).
  @MainActor var delivery = DeliveryState<Value>()

  private func index(of id: UInt64) -> Int? {
    var low = 0
    var high = entries.count
    while low < high {
      let middle = (low + high) / 2
      let candidate = entries[middle].id
      if candidate == id { return middle }
      if candidate < id { low = middle + 1 } else { high = middle }
    }
    return nil
  }

  override func remove(id: UInt64) -> Bool {
    guard let index = index(of: id) else { return false }
    entries.remove(at: index)
    return true
  }

  override func contains(id: UInt64) -> Bool { index(of: id) != nil }

  override func removeAll() -> [@Sendable () -> Void] {
    let hooks = entries.compactMap(\.onRegistryEnd)
    entries = []
    return hooks
  }

  override var count: Int { entries.count }
}

/// One observed property's observers inside an ``ObserverRegistry``.
///
/// A slot is resolved once — when an observer registers or a writer first connects — so that writes notify by
/// reference and never hash a key path. Slots are never removed from their registry (a property does not stop
/// existing); only their entries are, so a writer may cache a slot for as long as it holds the registry.
///
/// Slots are not generic: each entry holds an ``ObserverCall`` that reads the value from a pointer, so registering,
/// cancelling and iterating run as plain, non-generic code. The value type is checked once, when a slot is resolved.
///
/// `entries` is read and written only while the registry's lock is held; `delivery` only on the main actor.
@usableFromInline
final class ObserverSlot: DeliversInOrder, @unchecked Sendable {
  @usableFromInline
  struct Entry {
    @usableFromInline let id: UInt64
    @usableFromInline let call: ObserverCall

    @inlinable
    init(id: UInt64, call: ObserverCall) {
      self.id = id
      self.call = call
    }
  }

  /// The type of the values this slot's observers receive.
  @usableFromInline let valueType: Any.Type
  /// Sorted by id: ids grow monotonically and entries are appended. Guarded by the registry's lock, so the dynamic
  /// exclusivity check is skipped.
  @usableFromInline @exclusivity(unchecked) var entries: ContiguousArray<Entry> = []
  /// Main-actor only and touched in short accesses, so the dynamic exclusivity check is skipped.
  @usableFromInline @MainActor @exclusivity(unchecked) var delivery = DeliveryState()
  /// Observation's view of the property, when its model declares `Observable` (see ``ObservationBridge``); resolved
  /// by the first writer that connects with the model at hand. Main-actor only, like `delivery`.
  @usableFromInline @MainActor @exclusivity(unchecked) var observation: ObservationHook?
  @MainActor @exclusivity(unchecked) var observationResolved = false
  /// Whether the property is linked to this slot by a writer of its own (a `@Loadable`/`@Process` storage or an
  /// `@Observed` property), so that `observe(_:)` need not read the property to link it. Only ever set, on the main
  /// actor; `observe` reads it on the main actor only.
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var hasLinkedProperty = false

  init(valueType: Any.Type) {
    self.valueType = valueType
  }

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

  /// Removes the entry with `id` and returns it, so that the caller releases its closures after unlocking (they may
  /// hold the last reference to a token, whose `deinit` takes the lock again).
  func remove(id: UInt64) -> Entry? {
    guard let index = index(of: id) else { return nil }
    return entries.remove(at: index)
  }

  /// Whether an entry with `id` is registered.
  @usableFromInline
  func contains(id: UInt64) -> Bool { index(of: id) != nil }

  /// Removes every entry and returns them (the caller releases them, and runs their hooks, after unlocking).
  func removeAll() -> ContiguousArray<Entry> {
    defer { entries = [] }
    return entries
  }
}

/// One observer's handler, behind a non-generic interface.
///
/// A class rather than a closure: a notification calls it through an unretained reference (the snapshot's copy of
/// the entries keeps it alive), which a closure loaded from an array does not allow — each call would retain and
/// release the closure's context.
@usableFromInline
class ObserverCall {
  /// Called when the registry goes away while the observer is still registered (an `AsyncStream` finishes here).
  @usableFromInline let onRegistryEnd: (@Sendable () -> Void)?

  @usableFromInline
  init(onRegistryEnd: (@Sendable () -> Void)?) {
    self.onRegistryEnd = onRegistryEnd
  }

  /// Calls the handler with the value `value` points to.
  @usableFromInline @MainActor
  func callAsFunction(_ value: UnsafeRawPointer) {
    preconditionFailure("ObserverCall is abstract")
  }
}

/// An observer of `Value`s.
@usableFromInline
final class TypedObserverCall<Value>: ObserverCall {
  @usableFromInline let handler: @MainActor (Value) -> Void

  @inlinable
  init(_ handler: @escaping @MainActor (Value) -> Void, onRegistryEnd: (@Sendable () -> Void)?) {
    self.handler = handler
    super.init(onRegistryEnd: onRegistryEnd)
  }

  @inlinable @MainActor
  override func callAsFunction(_ value: UnsafeRawPointer) {
    handler(value.assumingMemoryBound(to: Value.self).pointee)
  }
}

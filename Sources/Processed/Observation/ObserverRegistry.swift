/// The macro-free, thread-safe registry that delivers state changes to observers.
///
/// A registry holds observers keyed by property. Each observed property gets a *slot* the first time an observer
/// registers for it (or a writer connects to it); from then on a write notifies through the slot directly, without
/// hashing a key path.
///
/// Guarantees:
/// - Observers are called synchronously after the change, on the main actor, outside any lock, in registration
///   order, once per change.
/// - An observer registered while a notification is being delivered does not see that change.
/// - After ``ObservationToken/cancel()`` returns, the observer is never called again — also when `cancel()` runs on
///   another thread. A call that had already begun on the main actor may finish.
/// - Handlers may register or cancel observers (their own too), write other observed properties and start, cancel
///   or reset loads without deadlock.
///
/// You rarely touch a registry directly: an ``ObservableModel`` owns one and ``ObservableModel/observe(_:isolation:_:)``
/// registers with it.
///
/// ```swift
/// @MainActor
/// final class Profile: ObservableModel, LoadableSupport {
///   let observers = ObserverRegistry()
///   var avatar: LoadableState<[UInt8]> = .absent
/// }
/// ```
///
/// > Note: A registry never takes part in its owner's equality, hashing or coding, and never retains its owner.
public final class ObserverRegistry: Sendable {
  struct State {
    var isClosed = false
    /// Every slot, keyed or not, with the type of the values its observers receive.
    var slots: [(slot: ObserverSlot, valueType: Any.Type)] = []
    var slotIndexByKey: [AnyKeyPath: Int] = [:]
    /// The key path object resolved last and its slot index: resolving the same key path object again (the same
    /// `\.property` literal, observed or written over and over) skips hashing it. Holding the key path keeps its
    /// identity from being reused.
    var lastKey: (keyPath: AnyKeyPath, index: Int)?
  }

  private let state = LockedBox(State())

  /// Creates an empty registry.
  public init() {}

  /// Closes every slot: observers are dropped (their handlers released, their end-of-registry hooks run) and
  /// observers added from now on are inert. Tokens and writers may still hold slots; they find them empty.
  deinit {
    let slots = state.withLock { state in
      state.isClosed = true
      return state.slots
    }
    // Outside the registry's lock: closing takes each slot's lock and runs user hooks.
    for entry in slots { entry.slot.close() }
  }

  // MARK: Slots

  /// The slot for `key`, created on first use. Hashes `key` once; callers cache the result.
  @usableFromInline
  func slot<Value>(for key: AnyKeyPath, of type: Value.Type = Value.self) -> ObserverSlot {
    state.withLock { state in
      let index: Int
      if let last = state.lastKey, last.keyPath === key {
        index = last.index
      } else if let found = state.slotIndexByKey[key] {
        index = found
        state.lastKey = (key, found)
      } else {
        let slot = ObserverSlot.make(closed: state.isClosed)
        state.slotIndexByKey[key] = state.slots.count
        state.lastKey = (key, state.slots.count)
        state.slots.append((slot, Value.self))
        return slot
      }
      let entry = state.slots[index]
      precondition(
        entry.valueType == Value.self, "Processed: key path \(key) was observed with two different value types.")
      return entry.slot
    }
  }

  /// A slot that belongs to no key path (for tests and direct use; a wrapper's own observers have a slot of their
  /// own, outside any registry).
  func makeAnonymousSlot<Value>(of type: Value.Type = Value.self) -> ObserverSlot {
    state.withLock { state in
      let slot = ObserverSlot.make(closed: state.isClosed)
      state.slots.append((slot, Value.self))
      return slot
    }
  }

  // Internal conveniences (tests reach slots through the registry).

  @inlinable
  func addObserver<Value>(
    to slot: ObserverSlot,
    onRegistryEnd: (@Sendable () -> Void)? = nil,
    _ handler: @escaping @MainActor (Value) -> Void
  ) -> ObservationToken {
    slot.addObserver(onRegistryEnd: onRegistryEnd, handler)
  }

  @inlinable @MainActor
  func notify<Value>(_ slot: ObserverSlot, _ value: Value) {
    SlotLink(slot).notify(value)
  }

  @inlinable @MainActor
  func keyPathWrite<Model, Value>(
    in slot: ObserverSlot, _ state: Value, of model: Model, through access: KeyPathAccess<Model, Value>
  ) {
    _ = slot.keyPathWrite(state, of: model, through: access)
  }

  /// The number of observers registered across all slots (for tests and diagnostics).
  var observerCount: Int {
    state.withLock { $0.slots }.reduce(0) { $0 + $1.slot.observerCount }
  }
}

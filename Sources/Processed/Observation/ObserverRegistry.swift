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
    var nextID: UInt64 = 0
    var slots: [AnyObserverSlot] = []
    var slotIndexByKey: [AnyKeyPath: Int] = [:]
  }

  let state = LockedBox(State())
  /// Bumped (under the lock) by every cancellation, so a notification in flight learns cheaply whether it must
  /// re-check an observer it copied before calling it.
  private let cancellations = AtomicUInt64()
  /// The id of the observer being called right now (`0`: none), and the thread calling it. A cancellation on another
  /// thread waits while its observer is being called, so that no call starts after `cancel()` returns.
  private let callingID = AtomicUInt64()
  private let callingThread = AtomicUInt64()
  /// Slots whose notifications are being coalesced by a key-path write (see `coalescingNotifications`).
  @MainActor private var coalescedSlots: [ObjectIdentifier] = []

  /// Creates an empty registry.
  public init() {}

  deinit {
    let hooks = state.withLock { state in state.slots.flatMap { $0.removeAll() } }
    for hook in hooks { hook() }
  }

  // MARK: Slots

  /// The slot for `key`, created on first use. Hashes `key` once; callers cache the result.
  func slot<Value>(for key: AnyKeyPath, of type: Value.Type = Value.self) -> ObserverSlot<Value> {
    state.withLock { state in
      if let index = state.slotIndexByKey[key] {
        guard let slot = state.slots[index] as? ObserverSlot<Value> else {
          preconditionFailure("Processed: key path \(key) was observed with two different value types.")
        }
        return slot
      }
      let slot = ObserverSlot<Value>()
      state.slotIndexByKey[key] = state.slots.count
      state.slots.append(slot)
      return slot
    }
  }

  /// A slot that belongs to no key path (the single slot of a wrapper's own registry).
  func makeAnonymousSlot<Value>(of type: Value.Type = Value.self) -> ObserverSlot<Value> {
    state.withLock { state in
      let slot = ObserverSlot<Value>()
      state.slots.append(slot)
      return slot
    }
  }

  // MARK: Registering

  /// Registers `handler` in `slot` and returns the token that keeps it registered.
  func addObserver<Value>(
    to slot: ObserverSlot<Value>,
    onRegistryEnd: (@Sendable () -> Void)? = nil,
    _ handler: @escaping @MainActor (Value) -> Void
  ) -> ObservationToken {
    let id = state.withLock { state in
      state.nextID &+= 1
      slot.entries.append(.init(id: state.nextID, handler: handler, onRegistryEnd: onRegistryEnd))
      return state.nextID
    }
    return ObservationToken(registry: self, slot: slot, id: id)
  }

  /// Removes an observer. Safe from any thread, any number of times. When the observer is being called on another
  /// thread, waits until that call returns; a handler cancelling itself (or another observer) does not wait.
  func removeObserver(id: UInt64, from slot: AnyObserverSlot) {
    let removed = state.withLock { _ in
      guard slot.remove(id: id) else { return false }
      cancellations.increment()
      return true
    }
    // Pairs with `deliver`: it publishes `callingID` before reading `cancellations`, and this reads `callingID`
    // after bumping `cancellations` (all sequentially consistent). So either the notifier sees the cancellation and
    // skips the call, or this sees the call in progress and waits for it.
    guard removed, callingID.load() == id, callingThread.load() != currentThreadID() else { return }
    while callingID.load() == id { yieldThread() }
  }

  /// The number of observers registered across all slots (for tests and diagnostics).
  var observerCount: Int {
    state.withLock { state in state.slots.reduce(0) { $0 + $1.count } }
  }

  // MARK: Notifying

  /// The observers of `slot` right now, or `nil` when there are none or the slot's notifications are being
  /// coalesced by a key-path write.
  @MainActor
  func snapshot<Value>(of slot: ObserverSlot<Value>) -> ObserverSnapshot<Value>? {
    if !coalescedSlots.isEmpty, coalescedSlots.contains(ObjectIdentifier(slot)) { return nil }
    let (entries, epoch) = state.withLock { _ in
      (slot.entries, cancellations.load())
    }
    if entries.isEmpty { return nil }
    return ObserverSnapshot(registry: self, slot: slot, entries: entries, epoch: epoch)
  }

  /// Calls every observer registered in `slot` with `value`, on the main actor, outside the lock, after any change
  /// of the slot whose delivery is in progress.
  @MainActor
  func notify<Value>(_ slot: ObserverSlot<Value>, _ value: Value) {
    slot.deliverInOrder(value, to: ChangeRecipients(first: snapshot(of: slot)))
  }

  /// Calls the observers of a snapshot, skipping those cancelled since it was taken.
  @MainActor
  func call<Value>(
    _ entries: ContiguousArray<ObserverSlot<Value>.Entry>, of slot: ObserverSlot<Value>, with value: Value,
    epoch: UInt64
  ) {
    callingThread.store(currentThreadID())
    var mustRecheck = false
    for entry in entries {
      let previous = callingID.exchange(entry.id)
      if !mustRecheck, cancellations.load() != epoch {
        // Something was cancelled since the snapshot: from here on, ask the registry before each call.
        mustRecheck = true
      }
      if mustRecheck, !state.withLock({ _ in slot.contains(id: entry.id) }) {
        callingID.store(previous)
        continue
      }
      entry.handler(value)
      callingID.store(previous)
    }
  }

  /// Runs `write` while notifications for `slot` are swallowed, then notifies once with `value`.
  ///
  /// Key-path writes use this: the property they write may notify by itself (an ``Observed`` property, a
  /// `@Loadable` inside a model, or a `didSet` that calls ``ObservableModel/notifyObservers(_:)``), and each
  /// change must reach each observer exactly once, whichever path made it.
  @MainActor
  func coalescingNotifications<Value>(in slot: ObserverSlot<Value>, value: Value, write: () -> Void) {
    let recipients = ChangeRecipients(first: snapshot(of: slot))
    let key = ObjectIdentifier(slot)
    coalescedSlots.append(key)
    write()
    if let index = coalescedSlots.lastIndex(of: key) { coalescedSlots.remove(at: index) }
    slot.deliverInOrder(value, to: recipients)
  }
}

public import CProcessedAtomics

/// One observed state's observers: a `@Loadable`/`@Process` wrapper's own, or one property's inside an
/// ``ObserverRegistry``.
///
/// Self-contained (one allocation, see `SlotMemory.swift`) and never removed from its registry, so writers keep it.
///
/// No call after `cancel()` returns: removals and snapshots count themselves under the lock, and a canceller waits
/// until the notifications it saw begin have ended. See Documentation/ObserverDelivery.md and
/// Documentation/CancelHandshake.md.
@usableFromInline
final class ObserverSlot: ManagedBuffer<ObserverSlotFields, processed_slot_sync>, DeliversInOrder {
  // Thread-safe, though not `Sendable` (a `ManagedBuffer` subclass cannot be): the fields guarded by the lock are
  // only touched under it, the main-actor fields only on the main actor (see `ObserverSlotFields`). Its holders
  // say so with `nonisolated(unsafe)`.

  deinit {
    destroySync()
  }

  /// The state of delivery of this slot's changes (main actor only; see ``DeliversInOrder``).
  @usableFromInline @MainActor
  var delivery: DeliveryState {
    get { mainFields.pointee.delivery }
    set { mainFields.pointee.delivery = newValue }
    _modify { yield &mainFields.pointee.delivery }
  }

  // MARK: Registering and cancelling

  /// Registers `handler` and returns the token that keeps it registered.
  @inlinable
  func addObserver<Value>(
    onRegistryEnd: (@Sendable () -> Void)? = nil,
    _ handler: @escaping @MainActor (Value) -> Void
  ) -> ObservationToken {
    let call =
      onRegistryEnd.map { EndingObserverCall(handler, onRegistryEnd: $0) } ?? TypedObserverCall(handler)
    return ObservationToken(slot: self, id: add(call))
  }

  /// Registers `call` (an actor-owned state's observer) and returns the token that keeps it registered.
  func register(_ call: ObserverCall) -> ObservationToken {
    ObservationToken(slot: self, id: add(call))
  }

  /// Adds `call` and returns its id; `0` (no observer has it) when the slot is closed, and the token is inert.
  @usableFromInline
  func add(_ call: ObserverCall) -> UInt64 {
    lock()
    defer { unlock() }
    let fields = fields
    guard !fields.pointee.isClosed else { return 0 }
    // Ids are unique in the process and grow, so the list stays sorted by id.
    call.id = processed_next_observer_id()
    if fields.pointee.list.isEmpty {
      if let single = fields.pointee.single {
        // A second observer: both move to the list, in registration order.
        fields.pointee.list.reserveCapacity(2)
        fields.pointee.list.append(single)
        fields.pointee.list.append(call)
        fields.pointee.single = nil
      } else {
        fields.pointee.single = call
      }
    } else {
      fields.pointee.list.append(call)
    }
    processed_slot_set_observers(sync, UInt32(truncatingIfNeeded: observerCountLocked))
    return call.id
  }

  /// Removes the observer with `id`. Safe from any thread, any number of times. When the observer is being called
  /// on another thread, waits until that notification ends; a handler cancelling itself (or another observer) does
  /// not wait.
  func remove(id: UInt64) {
    lock()
    let removed = takeCall(id: id)
    if removed != nil {
      countRemoval()
      processed_slot_set_observers(sync, UInt32(truncatingIfNeeded: observerCountLocked))
    }
    let begun = fields.pointee.begun
    unlock()
    // Also when the call was already gone: another thread's `cancel()` of the same token, or `close()`, may have
    // removed it an instant ago, while a notification had already chosen to call it. That notification had begun
    // before the removal, so `begun` counts it.
    waitForCallsToEnd(begun: begun)
    // `removed` is released here, after the lock: its handler may hold the last reference to a token.
    withExtendedLifetime(removed) {}
  }

  /// Under the lock: removes the call with `id` and returns it.
  private func takeCall(id: UInt64) -> ObserverCall? {
    let fields = fields
    if let single = fields.pointee.single {
      guard single.id == id else { return nil }
      fields.pointee.single = nil
      return single
    }
    guard let index = index(of: id) else { return nil }
    return fields.pointee.list.remove(at: index)
  }

  /// Under the lock: the index of `id` in the list, which is sorted by id (ids grow and calls are appended).
  private func index(of id: UInt64) -> Int? {
    let fields = fields
    var low = 0
    var high = fields.pointee.list.count
    while low < high {
      let middle = (low + high) / 2
      let candidate = fields.pointee.list[middle].id
      if candidate == id { return middle }
      if candidate < id { low = middle + 1 } else { high = middle }
    }
    return nil
  }

  /// Whether the observer with `id` is still registered (asked by a notification after a cancellation).
  @usableFromInline
  func isRegistered(_ id: UInt64) -> Bool {
    lock()
    defer { unlock() }
    if let single = fields.pointee.single { return single.id == id }
    return index(of: id) != nil
  }

  /// Drops every observer, runs their end-of-registry hooks and refuses observers added from now on.
  func close() {
    lock()
    let fields = fields
    fields.pointee.isClosed = true
    // Counts as a removal of every observer: a notification in flight re-checks before each call.
    countRemoval()
    var removed = fields.pointee.list
    fields.pointee.list = []
    if let single = fields.pointee.single { removed.append(single) }
    fields.pointee.single = nil
    processed_slot_set_observers(sync, 0)
    unlock()
    // Outside the lock: the hooks are user code, and releasing the calls may release tokens.
    for call in removed { call.registryDidEnd() }
  }

  /// The number of registered observers (for tests and diagnostics).
  var observerCount: Int {
    lock()
    defer { unlock() }
    return observerCountLocked
  }

  /// Under the lock: the number of registered observers.
  private var observerCountLocked: Int {
    fields.pointee.single == nil ? fields.pointee.list.count : 1
  }

  /// Blocks, on the shared `WaitPoint`, until as many notifications of the slot have ended as had `begun` when the
  /// observer was removed; never on the notifying thread.
  ///
  /// See Documentation/CancelHandshake.md.
  private func waitForCallsToEnd(begun: UInt32) {
    let sync = sync
    guard processed_slot_notification_may_run(sync, begun), !processed_notification_is_current_thread() else {
      return
    }
    processed_notification_waiter_arrives()
    WaitPoint.shared.wait { processed_slot_notification_may_run(sync, begun) }
    processed_notification_waiter_leaves()
  }

  // MARK: Notifying

  /// The observers right now and the removal count, for a delivery on an actor other than the main one (see
  /// `IsolatedStateStorage.deliver`). No notification is counted as begun: a `cancel()` on another thread never waits
  /// for such a delivery, and a delivery asks the slot before each call once something was removed.
  @usableFromInline
  func registeredCalls() -> (calls: SnapshotCalls, epoch: UInt32) {
    lock()
    defer { unlock() }
    let fields = fields
    if let single = fields.pointee.single { return (.one(single), removals) }
    if fields.pointee.list.isEmpty { return (.none, removals) }
    return (.several(fields.pointee.list), removals)
  }

  /// The observers right now (``ObserverSnapshot/none`` when there are none).
  ///
  /// A snapshot that is not empty is a notification that has begun: it must be delivered (which ends it).
  ///
  /// Always inlined: returned from a call, the snapshot would be written to memory and read back at once, which
  /// stalls on store forwarding.
  @inlinable @inline(__always)
  func snapshot<Value>(of type: Value.Type) -> ObserverSnapshot<Value> {
    // Nobody observes: no lock, and no notification begins.
    guard processed_slot_has_observers(sync) else { return .none }
    processed_notification_note_thread()
    lock()
    let fields = fields
    let snapshot: ObserverSnapshot<Value>
    if let single = fields.pointee.single {
      fields.pointee.begun &+= 1
      snapshot = ObserverSnapshot(slot: self, calls: .one(single), epoch: removals)
    } else if fields.pointee.list.isEmpty {
      snapshot = .none
    } else {
      fields.pointee.begun &+= 1
      snapshot = ObserverSnapshot(slot: self, calls: .several(fields.pointee.list), epoch: removals)
    }
    unlock()
    return snapshot
  }
}

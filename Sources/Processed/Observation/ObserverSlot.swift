public import CProcessedAtomics

/// One observed state's observers: a `@Loadable`/`@Process` wrapper's own, or one property's inside an
/// ``ObserverRegistry``.
///
/// A slot is self-contained — its observers, its lock and its cancellation counter live in one allocation (see
/// `SlotMemory.swift`) — so a wrapper needs one slot, not a registry of slots, and a token needs only its slot. A
/// slot is resolved once — when an observer registers or a writer first connects — so that writes notify by
/// reference and never hash a key path. Slots are never removed from their registry (a property does not stop
/// existing); only their observers are, so a writer may cache a slot for as long as it holds it.
///
/// Observers are ``ObserverCall`` objects, so registering and cancelling run as plain, non-generic code, while a
/// notification — `@inlinable`, specialized in the client for the value's type — passes the value straight to each
/// typed handler. The value type of a registry's slot is checked once, when it is resolved.
///
/// *No call after `cancel()` returns.* A removal bumps the slot's cancellation counter under the lock. A
/// notification publishes the slot it notifies (one atomic exchange, process-wide: observers are called on the main
/// actor only) and then, before each call, reads the counter; once it moved since the snapshot, it asks the slot
/// under the lock whether the observer is still registered. A `cancel()` on another thread reads the published
/// slot after its removal and, when its slot is being notified, blocks until a notification ends. All of these
/// operations are sequentially consistent, so either the notifier sees the removal and skips the observer, or the
/// canceller sees the notification and waits (see Architecture.md).
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
    get { fields.pointee.delivery }
    set { fields.pointee.delivery = newValue }
    _modify { yield &fields.pointee.delivery }
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

  /// Adds `call` and returns its id; `0` (no observer has it) when the slot is closed, and the token is inert.
  @usableFromInline
  func add(_ call: ObserverCall) -> UInt64 {
    lock()
    defer { unlock() }
    let fields = fields
    guard !fields.pointee.isClosed else { return 0 }
    fields.pointee.nextID &+= 1
    call.id = fields.pointee.nextID
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
    return call.id
  }

  /// Removes the observer with `id`. Safe from any thread, any number of times. When the observer is being called
  /// on another thread, waits until that notification ends; a handler cancelling itself (or another observer) does
  /// not wait.
  func remove(id: UInt64) {
    lock()
    let removed = takeCall(id: id)
    if removed != nil { bumpCancellations() }
    unlock()
    // Also when the call was already gone: another thread's `cancel()` of the same token, or `close()`, may have
    // removed it an instant ago, while a notification had already chosen to call it. That removal bumped the
    // counter under the lock, which this thread took after it.
    waitForCallsToEnd()
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
    // Counts as a cancellation of every observer: a notification in flight re-checks before each call.
    bumpCancellations()
    var removed = fields.pointee.list
    fields.pointee.list = []
    if let single = fields.pointee.single { removed.append(single) }
    fields.pointee.single = nil
    unlock()
    // Outside the lock: the hooks are user code, and releasing the calls may release tokens.
    for call in removed { call.registryDidEnd() }
  }

  /// The number of registered observers (for tests and diagnostics).
  var observerCount: Int {
    lock()
    defer { unlock() }
    return fields.pointee.single == nil ? fields.pointee.list.count : 1
  }

  /// Blocks until no call of an observer of this slot can start from a notification under way on another thread.
  ///
  /// Pairs with ``ObserverSnapshot/deliver(_:)``, which publishes the slot before it reads the cancellation
  /// counter for each observer, while this runs after a removal bumped the counter (all sequentially consistent). A
  /// handler cancelling on the notifying thread never waits.
  ///
  /// The wait blocks on the shared `WaitPoint`, which the notifier signals after ending a notification when it sees
  /// a waiter. The notifier reads the waiter count without a fence, so it can miss a waiter that arrives at that
  /// instant; the waiter then re-checks after at most one `WaitPoint` interval. It never spins.
  private func waitForCallsToEnd() {
    let bits = Self.bits(of: .passUnretained(self))
    guard processed_notification_is_elsewhere(bits) else { return }
    let seen = processed_notification_ended_count()
    processed_notification_waiter_arrives()
    WaitPoint.shared.wait { processed_notification_is_unchanged(bits, seen) }
    processed_notification_waiter_leaves()
  }

  // MARK: Notifying

  /// The observers right now, or `nil` when there are none.
  @inlinable
  func snapshot() -> ObserverSnapshot? {
    lock()
    let fields = fields
    let snapshot: ObserverSnapshot?
    if let single = fields.pointee.single {
      snapshot = ObserverSnapshot(slot: self, single: single, list: nil, epoch: cancellations)
    } else if fields.pointee.list.isEmpty {
      snapshot = nil
    } else {
      snapshot = ObserverSnapshot(slot: self, single: nil, list: fields.pointee.list, epoch: cancellations)
    }
    unlock()
    return snapshot
  }
}

/// The fields of an ``ObserverSlot``, kept in its allocation.
@usableFromInline
struct ObserverSlotFields {
  // Guarded by the slot's lock.

  /// The id of the last observer added; ids are never reused.
  @usableFromInline var nextID: UInt64 = 0
  /// The observer, while the slot has had one at most since it was made (a first observer costs no array).
  @usableFromInline var single: ObserverCall?
  /// The observers, sorted by id, once the slot had two at once; then `single` is `nil`.
  @usableFromInline var list: ContiguousArray<ObserverCall> = []

  // Main actor only.

  /// Observation's view of the property, when its model declares `Observable` (see ``ObservationBridge``);
  /// resolved by the first writer that connects with the model at hand.
  @usableFromInline var observation: ObservationHook?
  @usableFromInline var delivery = DeliveryState()
  @usableFromInline var observationResolved = false
  /// Whether the property is linked to this slot by a writer of its own (a `@Loadable`/`@Process` storage or an
  /// `@Observed` property), so that `observe(_:)` need not read the property to link it.
  @usableFromInline var hasLinkedProperty = false

  // Guarded by the slot's lock (last, where it packs with the flags above).

  /// The registry is gone: observers added now are inert.
  @usableFromInline var isClosed: Bool

  @usableFromInline
  init(isClosed: Bool) {
    self.isClosed = isClosed
  }
}

/// One observer's handler, behind a non-generic interface, so that registering and cancelling are plain code.
///
/// A class rather than a closure: a notification calls it through an unretained reference (the snapshot keeps it
/// alive), which a closure loaded from an array does not allow — each call would retain and release its context.
@usableFromInline
class ObserverCall {
  /// Set once, under the slot's lock, before the call is published to a snapshot.
  @usableFromInline @exclusivity(unchecked) final var id: UInt64 = 0

  @usableFromInline
  init() {}

  /// Called when the registry goes away while the observer is still registered.
  @usableFromInline
  func registryDidEnd() {}
}

/// An observer of `Value`s. A notification, specialized for `Value` in the client, calls `handler` directly.
@usableFromInline
class TypedObserverCall<Value>: ObserverCall {
  @usableFromInline final let handler: @MainActor (Value) -> Void

  @inlinable
  init(_ handler: @escaping @MainActor (Value) -> Void) {
    self.handler = handler
    super.init()
  }
}

/// An observer with an end-of-registry hook (an `AsyncStream` finishes there).
@usableFromInline
final class EndingObserverCall<Value>: TypedObserverCall<Value> {
  @usableFromInline let onRegistryEnd: @Sendable () -> Void

  @inlinable
  init(_ handler: @escaping @MainActor (Value) -> Void, onRegistryEnd: @escaping @Sendable () -> Void) {
    self.onRegistryEnd = onRegistryEnd
    super.init(handler)
  }

  @usableFromInline
  override func registryDidEnd() { onRegistryEnd() }
}

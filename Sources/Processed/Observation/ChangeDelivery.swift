/// The observers one slot had when a change was made, captured before the change is delivered.
///
/// Taking every snapshot of a change first and calling observers second is what makes "an observer registered
/// during a notification does not see that change" hold when one write notifies several registries (a wrapper's
/// own observers and its model's).
///
/// The core and slot are held `unowned(unsafe)`, skipping two retain/release pairs per notification: a snapshot lives
/// only while its change is delivered, the writer delivering it holds the core (through its ``ModelLink``, or a
/// local registry) for that whole time, and the core holds its slots for its whole life.
@usableFromInline
struct ObserverSnapshot {
  @usableFromInline unowned(unsafe) let core: RegistryCore
  @usableFromInline unowned(unsafe) let slot: ObserverSlot
  @usableFromInline let entries: ContiguousArray<ObserverSlot.Entry>
  @usableFromInline let epoch: UInt64

  @usableFromInline
  init(core: RegistryCore, slot: ObserverSlot, entries: ContiguousArray<ObserverSlot.Entry>, epoch: UInt64) {
    self.core = core
    self.slot = slot
    self.entries = entries
    self.epoch = epoch
  }

  @inlinable @MainActor
  func deliver<Value>(_ value: Value) {
    withUnsafePointer(to: value) { pointer in
      core.call(entries, of: slot, with: UnsafeRawPointer(pointer), epoch: epoch)
    }
  }
}

/// Everyone one change goes to: at most two snapshots (a wrapper's own observers and its model's), kept inline so
/// that a write allocates nothing.
@usableFromInline
struct ChangeRecipients {
  @usableFromInline var first: ObserverSnapshot?
  @usableFromInline var second: ObserverSnapshot?

  @inlinable
  init(first: ObserverSnapshot? = nil, second: ObserverSnapshot? = nil) {
    self.first = first
    self.second = second
  }

  @inlinable
  var isEmpty: Bool { first == nil && second == nil }

  @inlinable @MainActor
  func deliver<Value>(_ value: Value) {
    if let first { first.deliver(value) }
    if let second { second.deliver(value) }
  }
}

/// Whether a state's changes are being delivered, and the deliveries of changes made meanwhile.
@usableFromInline
struct DeliveryState {
  @usableFromInline var isDelivering = false
  @usableFromInline var pending: [@MainActor () -> Void] = []

  @usableFromInline
  init() {}
}

/// Something whose changes are delivered one after another, in the order they were made.
///
/// A change made by an observer while an earlier change of the same state is being delivered waits until that
/// delivery ends. Otherwise a later observer would see the nested change first and the earlier one last, and be left
/// holding a stale value.
@usableFromInline
protocol DeliversInOrder: AnyObject {
  /// Touched only in short accesses by `deliverInOrder`, never across a call to an observer.
  @MainActor var delivery: DeliveryState { get set }
}

extension DeliversInOrder {
  /// Delivers `value` to `recipients` now, or after the delivery in progress.
  @inlinable @MainActor
  func deliverInOrder<Value>(_ value: Value, to recipients: borrowing ChangeRecipients) {
    if recipients.isEmpty { return }
    completeDelivery(value, to: recipients, owning: reserveDelivery())
  }

  /// Takes the delivery turn if nobody holds it; returns whether the caller now holds it. A caller that holds it
  /// must end with `completeDelivery(_:to:owning: true)`.
  @inlinable @MainActor
  func reserveDelivery() -> Bool {
    if delivery.isDelivering { return false }
    delivery.isDelivering = true
    return true
  }

  /// Delivers `value` now and then everything queued meanwhile (when `owning` the turn), or queues it behind the
  /// delivery in progress.
  @inlinable @MainActor
  func completeDelivery<Value>(_ value: Value, to recipients: borrowing ChangeRecipients, owning: Bool) {
    guard owning else {
      if !recipients.isEmpty {
        let queued = copy recipients
        delivery.pending.append { queued.deliver(value) }
      }
      return
    }
    recipients.deliver(value)
    while !delivery.pending.isEmpty {
      let next = delivery.pending.removeFirst()
      next()
    }
    delivery.isDelivering = false
  }
}

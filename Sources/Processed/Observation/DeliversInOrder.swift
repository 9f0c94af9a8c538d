/// Something whose changes are delivered one after another, in the order they were made.
///
/// A change made by an observer while an earlier change of the same state is being delivered waits until that
/// delivery ends. Otherwise a later observer would see the nested change first and the earlier one last, and be left
/// holding a stale value.
@usableFromInline
protocol DeliversInOrder: AnyObject {
  /// Touched only in short accesses, never across a call to an observer.
  @MainActor var delivery: DeliveryState { get set }
}

extension DeliversInOrder {
  /// Delivers `value` to the observers `link` has now, at once or after the delivery in progress.
  ///
  /// The common write: one slot. Its snapshot is delivered from here, without being copied again.
  @inlinable @MainActor
  func deliverInOrder<Value>(_ value: Value, through link: SlotLink) {
    // Nobody observes: no lock, no snapshot (and no echo to absorb: a key-path write with no observers delivers
    // nothing either).
    guard link.hasObservers else { return }
    let snapshot = link.snapshot(for: value)
    if snapshot.isEmpty { return }
    guard reserveDelivery() else {
      delivery.pending.append { snapshot.deliver(value) }
      return
    }
    snapshot.deliver(value)
    endDelivery()
  }

  /// Delivers `value` to `recipients` now, or after the delivery in progress.
  @inlinable @MainActor
  func deliverInOrder<Recipients: ChangeRecipient>(_ value: Recipients.Value, to recipients: Recipients) {
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
  ///
  /// Generic, so that one slot's snapshot is passed in registers, not through memory (a store-forwarding stall,
  /// measured).
  @inlinable @MainActor
  func completeDelivery<Recipients: ChangeRecipient>(
    _ value: Recipients.Value, to recipients: Recipients, owning: Bool
  ) {
    completeDeliveryInline(value, to: recipients, owning: owning)
  }

  /// ``completeDelivery(_:to:owning:)``, always inlined: for the write whose delivery is all it does after storing
  /// (``ObserverSlot/storedWrite(_:into:)``; a yielded change with an observer that does nothing, 26 → 24 ns).
  /// Inlined into every caller, it made the others slower (measured).
  @inlinable @inline(__always) @MainActor
  func completeDeliveryInline<Recipients: ChangeRecipient>(
    _ value: Recipients.Value, to recipients: Recipients, owning: Bool
  ) {
    guard owning else {
      if !recipients.isEmpty {
        delivery.pending.append { recipients.deliver(value) }
      }
      return
    }
    recipients.deliver(value)
    endDelivery()
  }

  /// Delivers what was queued during the delivery just made, then gives up the turn.
  @inlinable @MainActor
  func endDelivery() {
    if !delivery.pending.isEmpty { deliverPending() }
    delivery.isDelivering = false
  }

  @usableFromInline @MainActor
  func deliverPending() {
    while !delivery.pending.isEmpty {
      let next = delivery.pending.removeFirst()
      next()
    }
  }
}

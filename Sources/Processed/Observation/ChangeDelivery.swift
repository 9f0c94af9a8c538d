/// The observers one slot had when a change was made, captured before the change is delivered.
///
/// Taking every snapshot of a change first and calling observers second is what makes "an observer registered
/// during a notification does not see that change" hold when one write notifies several registries (a wrapper's
/// own observers and its model's).
struct ObserverSnapshot<Value> {
  let registry: ObserverRegistry
  let slot: ObserverSlot<Value>
  let entries: ContiguousArray<ObserverSlot<Value>.Entry>
  let epoch: UInt64

  @MainActor
  func deliver(_ value: Value) {
    registry.call(entries, of: slot, with: value, epoch: epoch)
  }
}

/// Everyone one change goes to: at most two snapshots (a wrapper's own observers and its model's), kept inline so
/// that a write allocates nothing.
struct ChangeRecipients<Value> {
  var first: ObserverSnapshot<Value>?
  var second: ObserverSnapshot<Value>?

  var isEmpty: Bool { first == nil && second == nil }

  @MainActor
  func deliver(_ value: Value) {
    first?.deliver(value)
    second?.deliver(value)
  }
}

/// Whether a state's changes are being delivered, and the changes made meanwhile.
struct DeliveryState<Value> {
  var isDelivering = false
  var pending: [(value: Value, recipients: ChangeRecipients<Value>)] = []
}

/// Something whose changes are delivered one after another, in the order they were made.
///
/// A change made by an observer while an earlier change of the same state is being delivered waits until that
/// delivery ends. Otherwise a later observer would see the nested change first and the earlier one last, and be left
/// holding a stale value.
protocol DeliversInOrder: AnyObject {
  associatedtype Delivered
  /// Touched only in short accesses by `deliverInOrder`, never across a call to an observer.
  @MainActor var delivery: DeliveryState<Delivered> { get set }
}

extension DeliversInOrder {
  /// Delivers `value` to `recipients` now, or after the delivery in progress.
  @MainActor
  func deliverInOrder(_ value: Delivered, to recipients: ChangeRecipients<Delivered>) {
    if recipients.isEmpty { return }
    if delivery.isDelivering {
      delivery.pending.append((value, recipients))
      return
    }
    delivery.isDelivering = true
    recipients.deliver(value)
    while !delivery.pending.isEmpty {
      let next = delivery.pending.removeFirst()
      next.recipients.deliver(next.value)
    }
    delivery.isDelivering = false
  }
}

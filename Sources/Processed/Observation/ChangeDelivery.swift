public import CProcessedAtomics

/// A slot held without reference counting, so that copying and using a link on every write costs no retain or
/// release.
///
/// A link does not keep its slot alive: whoever stores a link stores its ``anchor`` beside it (a strong reference to
/// the slot), and only uses the link while it holds the anchor.
@usableFromInline
struct SlotLink: @unchecked Sendable {
  // `@unchecked`: a slot is thread-safe (see ``ObserverSlot``).
  @usableFromInline let slot: Unmanaged<ObserverSlot>

  @usableFromInline
  init(_ slot: ObserverSlot) {
    self.slot = .passUnretained(slot)
  }

  /// The link to the slot of `keyPath` in `registry` (resolved, and created if needed, by hashing `keyPath` once).
  @usableFromInline
  init<Model, Value>(_ registry: ObserverRegistry, _ keyPath: KeyPath<Model, Value>) {
    self.init(registry.slot(for: keyPath, of: Value.self))
  }

  /// The link for `keyPath` of `instance`, or `nil` when the instance is not an ``ObservableModel``.
  @usableFromInline
  static func resolve<Model: AnyObject, Value>(_ instance: Model, keyPath: KeyPath<Model, Value>) -> SlotLink? {
    guard let model = instance as? any ObservableModel else { return nil }
    return SlotLink(model.observers, keyPath)
  }

  /// The strong reference that keeps this link valid; store it beside the link.
  @inlinable
  var anchor: ObserverSlot { slot.takeUnretainedValue() }

  /// The slot's observers right now, to deliver `value` to — or `nil` when there are none or the change is the
  /// echo of a key-path write, which delivers it itself (see ``ObserverSlot/keyPathWrite(_:of:through:)``).
  @inlinable @MainActor
  func snapshot<Value>(for value: Value) -> ObserverSnapshot<Value> {
    slot.withGuaranteedInstance { slot in
      KeyPathWrites.absorbsEcho(of: slot, value) ? .none : slot.snapshot(of: Value.self)
    }
  }

  /// Whether any observer is registered (one relaxed load; see `processed_slot_has_observers`).
  @inlinable
  var hasObservers: Bool {
    slot.withGuaranteedInstance { processed_slot_has_observers($0.sync) }
  }

  // MARK: The Observation bridge (see ``ObservationBridge``)

  /// Whether Observation tracks the slot's property (its model declares `Observable`). One load: writers of models
  /// that do not opt in pay this check and nothing else.
  @inlinable @MainActor
  var isTrackedByObservation: Bool {
    slot.withGuaranteedInstance { $0.mainFields.pointee.observation != nil }
  }

  /// Looks up, once per slot, whether `model` declares `Observable`, and records that the property is linked.
  @usableFromInline @MainActor
  func resolveObservation<Model: AnyObject, Value>(of model: Model, _ keyPath: KeyPath<Model, Value>) {
    let fields = slot.takeUnretainedValue().mainFields
    fields.pointee.hasLinkedProperty = true
    guard !fields.pointee.observationResolved else { return }
    fields.pointee.observationResolved = true
    fields.pointee.observation = ObservationBridge.hook(for: model, keyPath: keyPath)
  }

  /// Tells Observation the property was read. Out of line: only tracked properties call it.
  @usableFromInline @MainActor
  func observationAccess() { slot.takeUnretainedValue().mainFields.pointee.observation?.access() }

  /// Tells Observation the property is about to change.
  @usableFromInline @MainActor
  func observationWillSet() { slot.takeUnretainedValue().mainFields.pointee.observation?.willSet() }

  /// Tells Observation the property changed.
  @usableFromInline @MainActor
  func observationDidSet() { slot.takeUnretainedValue().mainFields.pointee.observation?.didSet() }

  /// Delivers `value` to the slot's observers, in order with the slot's other changes.
  @inlinable @MainActor
  func notify<Value>(_ value: Value) {
    slot.withGuaranteedInstance { $0.deliverInOrder(value, through: self) }
  }

  /// Runs a key-path write and notifies the slot's observers once (see
  /// ``ObserverSlot/keyPathWrite(_:of:through:)``).
  @inlinable @MainActor
  func keyPathWrite<Model, Value>(_ state: Value, of model: Model, through access: KeyPathAccess<Model, Value>)
    -> (address: UInt, settled: Bool)
  {
    slot.withGuaranteedInstance { $0.keyPathWrite(state, of: model, through: access) }
  }

  /// Writes a stored property and notifies the slot's observers (see ``ObserverSlot/storedWrite(_:into:)``).
  @inlinable @MainActor
  func storedWrite<Value>(_ state: Value, into storage: UnsafeMutablePointer<Value>) {
    slot.withGuaranteedInstance { $0.storedWrite(state, into: storage) }
  }

  /// Registers `handler` in the slot.
  @inlinable
  func addObserver<Value>(
    onRegistryEnd: (@Sendable () -> Void)? = nil,
    _ handler: @escaping @MainActor (Value) -> Void
  ) -> ObservationToken {
    slot.withGuaranteedInstance { $0.addObserver(onRegistryEnd: onRegistryEnd, handler) }
  }
}

/// The observers one slot had when a change was made, captured before the change is delivered.
///
/// Taking every snapshot of a change first and calling observers second is what makes "an observer registered
/// during a notification does not see that change" hold when one write notifies several slots (a wrapper's own
/// observers and its model's).
///
/// Retaining the one observer's call (or the array of observers) is the one retain a notification costs, and
/// releasing it the one release. Three words, so that a snapshot taken out of line comes back in registers rather
/// than through memory. The slot is unmanaged: a snapshot lives only while its change is delivered, and the writer
/// delivering it holds the slot (through the anchor of its ``SlotLink``) for that whole time.
@usableFromInline
struct ObserverSnapshot<Value> {
  /// `nil` for a snapshot of no observers (``none``): not an `Optional` snapshot, whose tag the optimizer tests
  /// through value witnesses where it merges similar functions.
  @usableFromInline let slot: Unmanaged<ObserverSlot>?
  /// The observers to call.
  @usableFromInline let calls: SnapshotCalls
  /// The slot's removal count when the snapshot was taken.
  @usableFromInline let epoch: UInt32

  @inlinable
  init(slot: ObserverSlot?, calls: SnapshotCalls, epoch: UInt32) {
    self.slot = slot.map { .passUnretained($0) }
    self.calls = calls
    self.epoch = epoch
  }

  /// No observers: nothing to deliver, and no notification begun.
  @inlinable
  static var none: ObserverSnapshot { ObserverSnapshot(slot: nil, calls: .none, epoch: 0) }

  /// Whether there is no observer to call.
  @inlinable
  var isEmpty: Bool { slot == nil }

  /// Calls every observer of the snapshot with `value`, skipping those removed since it was taken, and ends the
  /// notification.
  ///
  /// Specialized in the client for `Value`: the value goes straight to each typed handler. The slot's removal
  /// count is read before each call (a plain load); see ``ObserverSlot`` for why this makes "no call after
  /// `cancel()` returns" hold across threads.
  @inlinable @inline(__always) @MainActor
  func deliver(_ value: Value) {
    // An empty snapshot began no notification, so it must not end one.
    guard let slot else { return }
    slot.withGuaranteedInstance { slot in
      if let single = calls.single {
        // Unretained: the snapshot keeps the call alive.
        single.withGuaranteedInstance { call in
          if slot.removals == epoch || slot.isRegistered(call.id) {
            // The slot's value type was checked when it was resolved.
            unsafeDowncast(call, to: TypedObserverCall<Value>.self).handler(value)
          }
        }
      } else if case .several(let list) = calls {
        list.withElements { calls in
          var mustRecheck = false
          for index in calls.indices {
            if !mustRecheck, slot.removals != epoch {
              // Something was removed since the snapshot: from here on, ask the slot before each call.
              mustRecheck = true
            }
            // Unretained: the snapshot's array keeps the call alive.
            Unmanaged.passUnretained(calls[index]).withGuaranteedInstance { call in
              if mustRecheck, !slot.isRegistered(call.id) { return }
              // The slot's value type was checked when it was resolved.
              unsafeDowncast(call, to: TypedObserverCall<Value>.self).handler(value)
            }
          }
        }
      }
      // A waiter that arrives just after this read the waiter count is not woken here; it sleeps at most one
      // `WaitPoint` interval before it sees the change itself.
      if processed_slot_notification_end(slot.sync) { WaitPoint.wakeShared() }
    }
  }
}

/// Observers taken before a change is made, to deliver it to after: one slot's (``ObserverSnapshot``) or two slots'
/// (``ChangeRecipients``).
@usableFromInline
protocol ChangeRecipient<Value> {
  associatedtype Value
  /// Whether there is nobody to call.
  var isEmpty: Bool { get }
  /// Calls every observer with `value` (see ``ObserverSnapshot/deliver(_:)``).
  @MainActor func deliver(_ value: Value)
}

extension ObserverSnapshot: ChangeRecipient {}
extension ChangeRecipients: ChangeRecipient {}

/// The observers in an ``ObserverSnapshot``: the slot's one observer, or its array of several.
///
/// One word (both payloads are references, and the cases fit in their spare bits), and not generic, so that
/// destroying a snapshot is one release rather than two, and never goes through value witnesses.
@usableFromInline
enum SnapshotCalls {
  case none
  case one(ObserverCall)
  case several(ContiguousArray<ObserverCall>)

  /// The one observer, unretained (the snapshot holds it).
  ///
  /// Read through this property rather than bound by a `switch` in ``ObserverSnapshot/deliver(_:)``: a payload bound
  /// there is retained around the observer's call and released after it (measured: a retain and a release per
  /// notification); here the copy and its release are adjacent, and the optimizer removes both.
  @inlinable
  var single: Unmanaged<ObserverCall>? {
    if case .one(let call) = self { return .passUnretained(call) }
    return nil
  }
}

/// Everyone one change goes to when it reaches two slots (a wrapper's own observers and its model's), or when
/// a key-path write delivers a snapshot it took before writing. Kept inline, so that a write allocates nothing.
@usableFromInline
struct ChangeRecipients<Value> {
  @usableFromInline var first: ObserverSnapshot<Value>
  @usableFromInline var second: ObserverSnapshot<Value>

  @inlinable
  init(first: ObserverSnapshot<Value> = .none, second: ObserverSnapshot<Value> = .none) {
    self.first = first
    self.second = second
  }

  @inlinable
  var isEmpty: Bool { first.isEmpty && second.isEmpty }

  @inlinable @MainActor
  func deliver(_ value: Value) {
    first.deliver(value)
    second.deliver(value)
  }
}

/// Whether a state's changes are being delivered, and the deliveries of changes made meanwhile.
@usableFromInline
struct DeliveryState {
  @usableFromInline var pending: [@MainActor () -> Void] = []
  @usableFromInline var isDelivering = false

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
  /// Generic over the recipients, so that one slot's snapshot (three words) is passed in registers: passed in
  /// memory, as two slots' recipients are, it is written just before this call and read back at once, a load that
  /// stalls on store forwarding (measured: most of this function's time on a yielding key-path load).
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

public import CProcessedAtomics

/// The observers one slot had when a change was made, taken before anyone is called, so an observer registered during a
/// notification does not see that change.
///
/// Three words, one retain; the slot is unmanaged, held by the writer's ``SlotLink`` anchor while it delivers.
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

extension ObserverSnapshot: ChangeRecipient {}

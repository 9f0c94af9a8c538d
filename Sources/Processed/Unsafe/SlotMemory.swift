public import CProcessedAtomics

// The memory of an observer slot: one `ManagedBuffer` (the fields as the header, the lock and counters as the single C
// element), reached through pointers, not `ManagedBuffer.header` (an exclusivity check per access).
//
// Invariant: the memory never moves and the pointers are used only while the caller holds the slot; guarded fields only
// under the lock, main-actor fields only on the main actor. See Unsafe/README.md.

extension ObserverSlot {
  /// The slot's fields guarded by its lock: the first stored property of the header, at its start.
  @inlinable @inline(__always)
  var fields: UnsafeMutablePointer<ObserverSlotGuardedFields> {
    withUnsafeMutablePointerToHeader {
      UnsafeMutableRawPointer($0).assumingMemoryBound(to: ObserverSlotGuardedFields.self)
    }
  }

  /// The slot's main-actor fields: the header's second stored property, at ``mainFieldsOffset``.
  @inlinable @inline(__always)
  var mainFields: UnsafeMutablePointer<ObserverSlotMainFields> {
    // `ObserverSlot.`, not `Self.`: `Self` in a class loads the dynamic type on every access (5 ns a write).
    withUnsafeMutablePointerToHeader { header in
      (UnsafeMutableRawPointer(header) + ObserverSlot.mainFieldsOffset).assumingMemoryBound(
        to: ObserverSlotMainFields.self)
    }
  }

  /// Where a struct places its second stored property: right after the first, aligned. A constant the optimizer
  /// folds; checked against the layout's own answer before the first slot is made, in every build
  /// (``layoutIsChecked``).
  @inlinable
  static var mainFieldsOffset: Int {
    let alignment = MemoryLayout<ObserverSlotMainFields>.alignment
    return (MemoryLayout<ObserverSlotGuardedFields>.size + alignment - 1) / alignment * alignment
  }

  /// Stops the process, before any slot exists, if ``mainFieldsOffset`` is not where the header's main-actor fields
  /// are.
  static let layoutIsChecked: Bool = {
    precondition(
      mainFieldsOffset == MemoryLayout<ObserverSlotFields>.offset(of: \.main),
      "Processed: ObserverSlotFields is not laid out as SlotMemory expects")
    return true
  }()

  /// The slot's lock and cancellation counter.
  @inlinable @inline(__always)
  var sync: UnsafeMutablePointer<processed_slot_sync> {
    withUnsafeMutablePointerToElements { $0 }
  }

  /// A new slot, closed from the start when `closed` (its registry is gone: observers added to it are inert).
  @usableFromInline
  static func make(closed: Bool = false) -> ObserverSlot {
    _ = layoutIsChecked
    let slot = unsafeDowncast(
      create(minimumCapacity: 1) { _ in ObserverSlotFields(isClosed: closed) }, to: ObserverSlot.self)
    processed_slot_sync_init(slot.sync)
    return slot
  }

  /// Releases the lock's resources; called from `deinit`.
  func destroySync() {
    processed_slot_sync_destroy(sync)
  }

  @inlinable @inline(__always)
  func lock() { processed_slot_lock(sync) }

  @inlinable @inline(__always)
  func unlock() { processed_slot_unlock(sync) }

  /// Counted under the lock by every removal of an observer; read by notifications without it.
  @inlinable @inline(__always)
  var removals: UInt32 { processed_slot_removals(sync) }

  /// Under the lock: counts a removal.
  @inlinable @inline(__always)
  func countRemoval() { processed_slot_count_removal(sync) }
}

public import CProcessedAtomics

// The memory of an observer slot: one `ManagedBuffer` allocation that holds the slot's fields (the header) and its
// lock and cancellation counter (the single tail element, a C struct: a `pthread_mutex_t` / `os_unfair_lock` must
// not move, and the counter is a C11 atomic).
//
// Invariant: the pointers below are valid for as long as the slot lives, and only used while the caller holds the
// slot (a strong reference, or an unmanaged one whose anchor it holds). A `ManagedBuffer`'s header and elements
// never move. The header is reached through a pointer rather than `ManagedBuffer.header`, a class's stored
// property, whose every access would pay a dynamic exclusivity check; accesses through the pointer are kept short
// and never overlap: the fields guarded by the lock are touched only between `lock()` and `unlock()`, the
// main-actor fields only on the main actor, and no access spans a call to user code.

extension ObserverSlot {
  /// The slot's fields.
  @inlinable @inline(__always)
  var fields: UnsafeMutablePointer<ObserverSlotFields> {
    withUnsafeMutablePointerToHeader { $0 }
  }

  /// The slot's lock and cancellation counter.
  @inlinable @inline(__always)
  var sync: UnsafeMutablePointer<processed_slot_sync> {
    withUnsafeMutablePointerToElements { $0 }
  }

  /// A new slot, closed from the start when `closed` (its registry is gone: observers added to it are inert).
  @usableFromInline
  static func make(closed: Bool = false) -> ObserverSlot {
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

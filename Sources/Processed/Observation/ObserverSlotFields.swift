/// The fields of an ``ObserverSlot``, kept in its allocation: those guarded by its lock, then those of the main
/// actor. Two structs, reached through two pointers (see `SlotMemory.swift`), so that an access to one group never
/// covers the other: the thread sanitizer reports an access through a pointer at the pointee's address.
@usableFromInline
struct ObserverSlotFields {
  var guarded: ObserverSlotGuardedFields
  var main = ObserverSlotMainFields()

  init(isClosed: Bool) {
    guarded = ObserverSlotGuardedFields(isClosed: isClosed)
  }
}

/// The fields of an ``ObserverSlot`` that are guarded by its lock.
@usableFromInline
struct ObserverSlotGuardedFields {
  /// The observer, while the slot has had one at most since it was made (a first observer costs no array).
  @usableFromInline var single: ObserverCall?
  /// The observers, sorted by id, once the slot had two at once; then `single` is `nil`.
  @usableFromInline var list: ContiguousArray<ObserverCall> = []
  /// The registry is gone: observers added now are inert.
  var isClosed: Bool
  /// How many notifications of the slot have begun (taken a snapshot). Wraps; compared as a difference.
  @usableFromInline var begun: UInt32 = 0

  init(isClosed: Bool) {
    self.isClosed = isClosed
  }
}

public import CProcessedAtomics

/// The key-path writes in progress, numbered by nesting depth, so that a write notifies once when the property also
/// notifies by itself: its slot records the innermost write, and a nested write of the same property saves the outer
/// record on its stack.
///
/// Main-actor only. See Documentation/KeyPathWrites.md.
@usableFromInline @MainActor
enum KeyPathWrites {
  // How many key-path writes are in progress, nested, is a plain C field (`processed_main_counters`): the fast
  // paths of `begin` and `end` are inlined into the client, where a Swift static would be reached through its
  // lazy-initialization check on every access. The depth overflows (a trap) only past 65,535 nested writes, which
  // the stack does not reach.

  /// How many key-path writes are in progress, nested.
  @inlinable static var depth: UInt16 {
    get { processed_keypath_write_depth() }
    set { processed_keypath_set_write_depth(newValue) }
  }

  /// A slot's record of its innermost write, saved by a nested write of the same property.
  @usableFromInline
  struct Record {
    @usableFromInline let depth: UInt16
    @usableFromInline let echoed: Bool
    @usableFromInline let settled: Bool
    @usableFromInline let destination: UnsafeMutableRawPointer?
    @usableFromInline let type: ObjectIdentifier?

    @inlinable
    init(
      depth: UInt16, echoed: Bool, settled: Bool, destination: UnsafeMutableRawPointer?, type: ObjectIdentifier?
    ) {
      self.depth = depth
      self.echoed = echoed
      self.settled = settled
      self.destination = destination
      self.type = type
    }
  }

  /// A key-path write of `slot` begins; the value it settles on goes to `destination` (valid until ``end(_:_:)``).
  ///
  /// An unsettled outer write of the same property settles on `readBack()`; its record is returned for ``end(_:_:)``.
  @inlinable @inline(__always)
  static func begin<Value>(
    _ slot: ObserverSlot, settlingIn destination: UnsafeMutablePointer<Value?>, _ readBack: () -> Value
  ) -> Record {
    let fields = slot.mainFields
    let outer: Record
    if fields.pointee.writeDepth == 0 {
      // No write of this property under way: its fields hold their resting values.
      outer = Record(depth: 0, echoed: false, settled: false, destination: nil, type: nil)
    } else {
      outer = nestedRecord(slot, readBack)
    }
    let depth = depth + 1
    self.depth = depth
    fields.pointee.writeDepth = depth
    fields.pointee.echoedWrite = false
    fields.pointee.settledWrite = false
    fields.pointee.settleDestination = UnsafeMutableRawPointer(destination)
    fields.pointee.settleType = ObjectIdentifier(Value.self)
    return outer
  }

  /// The record of the write of `slot` under way, which settles now unless it had. Out of line, but specialized in
  /// the client like the rest (the settled value is copied through its type's code, not its value witnesses).
  @inlinable @inline(never)
  static func nestedRecord<Value>(_ slot: ObserverSlot, _ readBack: () -> Value) -> Record {
    let fields = slot.mainFields
    if !fields.pointee.settledWrite {
      settle(fields, on: readBack())
    }
    return Record(
      depth: fields.pointee.writeDepth, echoed: fields.pointee.echoedWrite, settled: true,
      destination: fields.pointee.settleDestination, type: fields.pointee.settleType)
  }

  /// The key-path write of `slot` returns: puts the outer write's record back and returns whether this write
  /// settled on a value (then stored in its destination).
  @inlinable @inline(__always)
  static func end(_ slot: ObserverSlot, _ outer: Record) -> Bool {
    let fields = slot.mainFields
    let settled = fields.pointee.settledWrite
    fields.pointee.writeDepth = outer.depth
    fields.pointee.echoedWrite = outer.echoed
    fields.pointee.settledWrite = outer.settled
    fields.pointee.settleDestination = outer.destination
    fields.pointee.settleType = outer.type
    depth -= 1
    return settled
  }

  /// Stores `value` in the destination of the innermost write of the slot whose main fields are `fields`.
  ///
  /// The destination is a `Value?` of the slot's value type: a slot belongs to one property, whose type its writes
  /// and notifications share (checked when the slot is resolved, and here once more).
  @inlinable
  static func settle<Value>(_ fields: UnsafeMutablePointer<ObserverSlotMainFields>, on value: Value) {
    precondition(
      fields.pointee.settleType == ObjectIdentifier(Value.self),
      "Processed: a property notified a value of another type than its key-path write")
    fields.pointee.settleDestination.unsafelyUnwrapped.assumingMemoryBound(to: Value?.self).pointee = value
    fields.pointee.settledWrite = true
  }

  /// Whether a notification of `slot` with `value` is the echo of the innermost key-path write; then its value is
  /// recorded and the caller delivers nothing.
  @inlinable
  static func absorbsEcho<Value>(of slot: ObserverSlot, _ value: Value) -> Bool {
    if slot.mainFields.pointee.writeDepth == 0 { return false }
    return absorbsEchoSlowly(of: slot, value)
  }

  @inlinable @inline(never)
  static func absorbsEchoSlowly<Value>(of slot: ObserverSlot, _ value: Value) -> Bool {
    let fields = slot.mainFields
    // Only while this slot's write is the innermost one, and only its first notification.
    guard fields.pointee.writeDepth == depth, !fields.pointee.echoedWrite else { return false }
    fields.pointee.echoedWrite = true
    if !fields.pointee.settledWrite { settle(fields, on: value) }
    return true
  }
}

extension ObserverSlot {
  /// Writes `state` into the property of `model` that `access` reaches and delivers the change once: the value the
  /// property holds after the write, absorbing the property's own notification (its echo).
  ///
  /// Returns the address written through (see ``StoredProperties``) and whether the write settled. See
  /// Documentation/KeyPathWrites.md.
  @inlinable @MainActor @discardableResult
  func keyPathWrite<Model, Value>(_ state: Value, of model: Model, through access: KeyPathAccess<Model, Value>)
    -> (address: UInt, settled: Bool)
  {
    // The new state, then (after the swap) the replaced one, then the one read back: one variable, so that a write
    // copies the state once and the read-back once.
    var value: Value? = state
    if mainFields.pointee.writeDepth == 0, !processed_slot_has_observers(sync) {
      return (access.apply(model, &value, .write), false)
    }
    let recipients = snapshot(of: Value.self)
    let ownsDelivery = reserveDelivery()
    // Read back in the same call as the write, unless nobody is to be told or the write is expected to settle.
    let readsBack = !recipients.isEmpty && !access.settles
    // Where the echo (or a nested write) leaves the value this write settles on: valid for the whole write.
    var settledValue: Value? = nil
    let (address, settled) = withMutablePointer(to: &settledValue) { destination in
      let outer = KeyPathWrites.begin(self, settlingIn: destination) { access.read(model) }
      let address = access.apply(model, &value, readsBack ? .writeReadingBack : .write)
      let settled = KeyPathWrites.end(self, outer)
      if settled { swap(&value, &destination.pointee) }
      return (address, settled)
    }
    if !settled, !readsBack, !recipients.isEmpty { value = access.read(model) }
    // With no recipients, `value` is the replaced state, which is then delivered to nobody.
    completeDelivery(value.unsafelyUnwrapped, to: recipients, owning: ownsDelivery)
    return (address, settled)
  }

  /// Writes `state` into `storage`, a stored property of the model (see ``StoredProperties``), and delivers it.
  ///
  /// A stored property runs no code when written, so there is no echo to absorb and no write around this one.
  @inlinable @MainActor
  func storedWrite<Value>(_ state: Value, into storage: UnsafeMutablePointer<Value>) {
    let recipients = snapshot(of: Value.self)
    storage.pointee = state
    if recipients.isEmpty { return }
    completeDeliveryInline(state, to: recipients, owning: reserveDelivery())
  }
}

public import CProcessedAtomics

/// The key-path writes in progress, innermost last: how a key-path write notifies once even when the property also
/// notifies by itself.
///
/// Main-actor only and touched in short accesses, so the dynamic exclusivity check is skipped.
@usableFromInline @MainActor
enum KeyPathWrites {
  /// A key-path write in progress (see ``ObserverSlot/keyPathWrite(value:readBack:write:)``). Plain data, so that
  /// pushing and popping one copies a few words and calls no value witness: the value it settled on, if any, is
  /// kept in ``settledValues``.
  @usableFromInline
  struct Mark {
    @usableFromInline let slot: ObjectIdentifier
    /// Whether the property's own notification of this write (its echo) was absorbed.
    @usableFromInline var echoed = false
    /// Where in ``settledValues`` the value the property held after this write is: the echo's value, or the value
    /// read when a nested write of the same property began. `-1`: none; read it back when the write returns.
    @usableFromInline var settled: Int32 = -1

    @inlinable
    init(slot: ObjectIdentifier) {
      self.slot = slot
    }
  }

  @exclusivity(unchecked) static var marks: [Mark] = []
  /// The values marks settled on, in the order they settled (an outer write may settle after a nested one); emptied
  /// when the outermost write returns.
  @exclusivity(unchecked) static var settledValues: [Any] = []

  /// Records `value` as the one `marks[index]` settled on.
  static func settle(_ index: Int, on value: Any) {
    marks[index].settled = Int32(settledValues.count)
    settledValues.append(value)
  }

  /// A key-path write of `slot` begins: every outer write of it whose value is not settled yet settles on the value
  /// the property holds now (`readBack`), and the write's mark is pushed.
  ///
  /// Out of line, like ``pop()``: inlined into the client, each access to these statics would go through their
  /// lazy-initialization check; here they are plain globals.
  @usableFromInline
  static func push(_ slot: ObserverSlot, _ readBack: () -> Any) {
    if !marks.isEmpty { settleOuterWrites(of: slot, readBack) }
    marks.append(Mark(slot: ObjectIdentifier(slot)))
  }

  /// Removes the innermost mark and returns the value it settled on, if any.
  @usableFromInline
  static func pop() -> Any? {
    let mark = marks.removeLast()
    if mark.settled < 0, settledValues.isEmpty { return nil }
    let value = mark.settled < 0 ? nil : settledValues[Int(mark.settled)]
    if marks.isEmpty { settledValues.removeAll(keepingCapacity: true) }
    return value
  }

  /// Whether a notification of `slot` with `value` is the echo of the innermost key-path write; then its value is
  /// recorded and the caller delivers nothing.
  @inlinable
  static func absorbsEcho<Value>(of slot: ObserverSlot, _ value: Value) -> Bool {
    if slot.mainFields.pointee.keyPathWrites == 0 { return false }
    return absorbsEchoSlowly(of: slot, value)
  }

  @usableFromInline
  static func absorbsEchoSlowly(of slot: ObserverSlot, _ value: Any) -> Bool {
    guard let last = marks.indices.last, marks[last].slot == ObjectIdentifier(slot), !marks[last].echoed else {
      return false
    }
    marks[last].echoed = true
    if marks[last].settled < 0 { settle(last, on: value) }
    return true
  }

  /// A nested key-path write of `slot` begins: every outer write of it whose value is not settled yet settles on
  /// the value the property holds now.
  @usableFromInline
  static func settleOuterWrites(of slot: ObserverSlot, _ readBack: () -> Any) {
    let id = ObjectIdentifier(slot)
    var current: Any?
    for index in marks.indices where marks[index].slot == id && marks[index].settled < 0 {
      if current == nil { current = readBack() }
      if let current { settle(index, on: current) }
    }
  }
}

extension ObserverSlot {
  /// Runs a key-path write of the property whose observers are this slot's, and delivers it once: the value the
  /// property holds after the write.
  ///
  /// The property may notify by itself (an ``Observed`` property, or a `didSet` that calls
  /// ``ObservableModel/notifyObservers(_:)``), and each change must reach each observer exactly once. The first
  /// notification of the slot made while this write is the innermost one — its *echo* — is absorbed, and its value
  /// (which a `didSet` may have normalised) is the one delivered. Without an echo the value is read back, or, when
  /// a nested key-path write of the same property began during this one (from a `didSet`), the value the property
  /// held at that moment. The observers are taken before `write` runs and the slot's delivery turn is reserved, so
  /// nested changes — from a `didSet` or from observers — reach observers after this one, in order, and are never
  /// absorbed.
  ///
  /// Nobody observes and no key-path write of the property is under way: the write is a plain write (nothing to
  /// deliver, no outer write waiting for its value, and a notification the property makes itself reaches whoever
  /// registered meanwhile, as for any write of the property).
  @inlinable @MainActor
  func keyPathWrite<Value>(value: Value, readBack: () -> Value, write: () -> Void) {
    if mainFields.pointee.keyPathWrites == 0, !processed_slot_has_observers(sync) {
      write()
      return
    }
    let recipients = ChangeRecipients(first: snapshot(of: Value.self))
    let ownsDelivery = reserveDelivery()
    KeyPathWrites.push(self) { readBack() }
    mainFields.pointee.keyPathWrites += 1
    write()
    mainFields.pointee.keyPathWrites -= 1
    let delivered: Value
    if let settled = KeyPathWrites.pop() {
      // The slot's value type was checked when it was resolved.
      delivered = settled as! Value
    } else if recipients.isEmpty {
      delivered = value
    } else {
      delivered = readBack()
    }
    completeDelivery(delivered, to: recipients, owning: ownsDelivery)
  }
}

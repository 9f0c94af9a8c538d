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

/// The fields of an ``ObserverSlot`` that only the main actor touches.
@usableFromInline
struct ObserverSlotMainFields {
  /// Observation's view of the property, when its model declares `Observable` (see ``ObservationBridge``);
  /// resolved by the first writer that connects with the model at hand.
  @usableFromInline var observation: ObservationHook?
  var delivery = DeliveryState()
  var observationResolved = false
  /// Whether the property is linked to this slot by a writer of its own (a `@Loadable`/`@Process` storage or an
  /// `@Observed` property), so that `observe(_:)` need not read the property to link it.
  @usableFromInline var hasLinkedProperty = false
  /// The nesting depth of the innermost key-path write of this slot in progress; `0`: none (see
  /// ``KeyPathWrites``). A notification checks this field of a slot it reads anyway, not a global.
  @usableFromInline var writeDepth: UInt16 = 0
  /// Whether the echo of that write was absorbed.
  @usableFromInline var echoedWrite = false
  /// Whether that write settled on a value (its echo's, or the property's when a nested write began).
  @usableFromInline var settledWrite = false
  /// Where that write's settled value goes: a `Value?` on the writer's stack frame, of the type `settleType`.
  @usableFromInline var settleDestination: UnsafeMutableRawPointer?
  /// The value type of `settleDestination`'s optional, checked when a value settles.
  @usableFromInline var settleType: ObjectIdentifier?
  /// For a key-path state: its last state that held a value, while it holds none (a ``KeptState``; `lastValue` of
  /// its controller). Kept here, in the model's registry, so that it lives exactly as long as the model.
  @usableFromInline var keptState: AnyObject?

  init() {}
}

/// The slot link of the last key-path host made, kept after its load ends, so that loading the same state again
/// resolves neither the model's conformance to `ObservableModel` nor its registry's slot.
@usableFromInline @MainActor
enum ParkedSlotLink {
  // `model` is `unowned`: it
  // never keeps the model alive, but it keeps the model's memory from being freed (an unowned reference does), so
  // no other object can have `instance` as its identity while it is parked — a model with that identity is
  // the parked model itself. It is never read. (At most one dead model's bare memory is kept, until the next park.)
  // Without it, a new model at a dead one's address would get the dead model's slot: `KeyPathLifetimeTests`'
  // many short-lived observed models then miss notifications.
  static var instance: ObjectIdentifier?
  static unowned var model: AnyObject?
  static var keyPath: AnyKeyPath?
  /// The model's slot for `keyPath`; `nil` when the model is not an ``ObservableModel``.
  static var anchor: ObserverSlot?
  /// The model registry's slot link for `keyPath` of `model`, or `nil` when the model is not an
  /// ``ObservableModel`` (see ``SlotLink/resolve(_:keyPath:)``).
  @usableFromInline
  static func link<Model: AnyObject, Value>(_ model: Model, _ keyPath: KeyPath<Model, Value>) -> SlotLink? {
    if instance == ObjectIdentifier(model), Self.keyPath === keyPath {
      return anchor.map(SlotLink.init)
    }
    let link = SlotLink.resolve(model, keyPath: keyPath)
    instance = ObjectIdentifier(model)
    Self.model = model
    Self.keyPath = keyPath
    anchor = link?.anchor
    return link
  }
}

/// The slot link of the last key-path host made, kept after its load ends, so that loading the same state again
/// resolves neither the model's conformance to `ObservableModel` nor its registry's slot.
@usableFromInline @MainActor
enum ParkedSlotLink {
  // `model` is `unowned`: never read, it keeps the dead model's memory, so no other object can take `instance` as its
  // identity while parked (see `KeyPathLifetimeTests`).
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

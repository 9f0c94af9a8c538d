/// Makes a stored property of an ``ObservableModel`` observable with `observe(\.property)`.
///
/// ```swift
/// @MainActor
/// final class SearchModel: ObservableModel {
///   let observers = ObserverRegistry()
///   @Observed var query = ""
/// }
///
/// let model = SearchModel()
/// let token = model.observe(\.query) { print("query is now", $0) }
/// model.query = "swift"  // prints "query is now swift"
/// ```
///
/// Every write notifies, also one that stores an equal value. The property must be read and written on the main
/// actor. `@Observed` works only inside classes that adopt ``ObservableModel``; for plain properties, call
/// ``ObservableModel/notifyObservers(_:)`` from `didSet` instead.
@propertyWrapper
public struct Observed<Value> {
  /// The value and its link to the model's registry. A reference, so that a write reaches them with one key-path
  /// read of the wrapper instead of several key-path writes into it.
  @usableFromInline let box: ObservedBox<Value>

  /// Creates the property with its initial value.
  ///
  /// - Parameter wrappedValue: The initial value.
  public init(wrappedValue: Value) {
    box = ObservedBox(wrappedValue)
  }

  /// Unavailable: `@Observed` needs the model that contains it.
  @available(*, unavailable, message: "@Observed is only available on properties of classes that adopt ObservableModel")
  public var wrappedValue: Value {
    get { fatalError() }
    // swift-format-ignore
    set { fatalError() }
  }

  /// Reads and writes the property of `instance`; a write notifies the model's observers.
  @inlinable @MainActor
  public static subscript<Model: ObservableModel>(
    _enclosingInstance instance: Model,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
    storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
  ) -> Value {
    get { instance[keyPath: storageKeyPath].box.value }
    set {
      let box = instance[keyPath: storageKeyPath].box
      box.value = newValue
      let link = box.link ?? box.connect(to: instance, wrappedKeyPath)
      link.notify(newValue)
    }
  }
}

/// The storage of an ``Observed`` property. Used on the main actor only.
@usableFromInline
final class ObservedBox<Value>: @unchecked Sendable {
  @usableFromInline var value: Value
  @usableFromInline var link: ModelLink?
  /// Keeps `link` valid.
  var anchor: RegistryCore?

  @usableFromInline
  init(_ value: Value) {
    self.value = value
  }

  /// Resolves and caches the link to the model's registry (once per property and instance).
  @usableFromInline
  func connect<Model: ObservableModel>(to model: Model, _ keyPath: KeyPath<Model, Value>) -> ModelLink {
    let registry = model.observers
    let link = ModelLink(registry: registry, slot: registry.slot(for: keyPath, of: Value.self))
    self.link = link
    anchor = link.anchor
    return link
  }
}

// `@unchecked`: the box is read and written on the main actor only (the subscript is main-actor isolated).
extension Observed: @unchecked Sendable where Value: Sendable {}

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
  private var value: Value
  private var link: ModelLink<Value>?

  /// Creates the property with its initial value.
  ///
  /// - Parameter wrappedValue: The initial value.
  public init(wrappedValue: Value) {
    value = wrappedValue
  }

  /// Unavailable: `@Observed` needs the model that contains it.
  @available(*, unavailable, message: "@Observed is only available on properties of classes that adopt ObservableModel")
  public var wrappedValue: Value {
    get { fatalError() }
    // swift-format-ignore
    set { fatalError() }
  }

  /// Reads and writes the property of `instance`; a write notifies the model's observers.
  @MainActor
  public static subscript<Model: ObservableModel>(
    _enclosingInstance instance: Model,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
    storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
  ) -> Value {
    get { instance[keyPath: storageKeyPath].value }
    set {
      instance[keyPath: storageKeyPath].value = newValue
      let link: ModelLink<Value>
      if let cached = instance[keyPath: storageKeyPath].link {
        link = cached
      } else {
        let registry = instance.observers
        link = ModelLink(registry: registry, slot: registry.slot(for: wrappedKeyPath))
        instance[keyPath: storageKeyPath].link = link
      }
      link.notify(newValue)
    }
  }
}

extension Observed: Sendable where Value: Sendable {}

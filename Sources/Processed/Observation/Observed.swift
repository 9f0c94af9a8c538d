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
  /// The value, stored inline in the model.
  @usableFromInline var value: Value
  /// The model registry's slot for this property, resolved on the first write. Unmanaged, so that a write reads
  /// it without reference counting; `anchor` keeps it valid.
  @usableFromInline var link: SlotLink?
  @usableFromInline var anchor: RegistryCore?
  /// Observation's view of the property, when the model declares `Observable` (see ``ObservationBridge``).
  @usableFromInline var observation: ObservationHook?
  /// Whether `observation` was looked for.
  @usableFromInline var observationResolved = false

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
  ///
  /// Always inlined into the property's accessors, where the storage key path is a literal that the compiler turns
  /// into a direct field access: a write stores the value and reads the link in one access to the model.
  @inlinable @inline(__always) @MainActor
  public static subscript<Model: ObservableModel>(
    _enclosingInstance instance: Model,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
    storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
  ) -> Value {
    get {
      if !instance[keyPath: storageKeyPath].observationResolved {
        resolveObservation(of: instance, wrappedKeyPath, storageKeyPath)
      }
      if let observation = instance[keyPath: storageKeyPath].observation { observation.access() }
      return instance[keyPath: storageKeyPath].value
    }
    set {
      if let link = instance[keyPath: storageKeyPath].store(newValue) {
        notify(newValue, through: link)
      } else {
        setSlowly(newValue, in: instance, wrappedKeyPath, storageKeyPath)
      }
    }
  }

  /// The first write (which links the property to the model's registry), and every write of a property that
  /// Observation tracks.
  @usableFromInline @inline(never) @MainActor
  static func setSlowly<Model: ObservableModel>(
    _ newValue: Value, in instance: Model, _ wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
    _ storageKeyPath: ReferenceWritableKeyPath<Model, Self>
  ) {
    let link: SlotLink
    if let linked = instance[keyPath: storageKeyPath].link {
      link = linked
    } else {
      link = SlotLink(instance.observers, wrappedKeyPath)
      instance[keyPath: storageKeyPath].connect(link)
    }
    resolveObservation(of: instance, wrappedKeyPath, storageKeyPath)
    if let observation = instance[keyPath: storageKeyPath].observation {
      observation.withMutation { instance[keyPath: storageKeyPath].value = newValue }
    } else {
      instance[keyPath: storageKeyPath].value = newValue
    }
    notify(newValue, through: link)
  }

  /// Looks up, once, whether the model declares `Observable` (see ``ObservationBridge``).
  @usableFromInline @MainActor
  static func resolveObservation<Model: ObservableModel>(
    of instance: Model, _ wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
    _ storageKeyPath: ReferenceWritableKeyPath<Model, Self>
  ) {
    guard !instance[keyPath: storageKeyPath].observationResolved else { return }
    instance[keyPath: storageKeyPath].observationResolved = true
    instance[keyPath: storageKeyPath].observation = ObservationBridge.hook(for: instance, keyPath: wrappedKeyPath)
  }

  /// Stores `newValue` and returns the link to notify through — or, when the property is not linked yet or
  /// Observation tracks it, stores nothing and returns `nil` (the caller takes the slow path).
  @inlinable
  mutating func store(_ newValue: Value) -> SlotLink? {
    guard let link, observation == nil else { return nil }
    value = newValue
    return link
  }

  @usableFromInline
  mutating func connect(_ link: SlotLink) {
    self.link = link
    anchor = link.anchor
  }

  /// Out of line, so that each property's setter stays small.
  @inlinable @inline(never) @MainActor
  static func notify(_ value: Value, through link: SlotLink) {
    link.notify(value)
  }
}

// `@unchecked`: the link and anchor are used on the main actor only (the subscript is main-actor isolated).
extension Observed: @unchecked Sendable where Value: Sendable {}

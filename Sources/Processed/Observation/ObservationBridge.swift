#if canImport(Observation)
  internal import Observation
#endif

/// What a `@Loadable`, `@Process` or ``Observed`` property calls so that Observation tracks it when its model declares
/// `Observable`.
///
/// Resolved once per property; `nil` (one check) for other models.
@usableFromInline
class ObservationHook: @unchecked Sendable {
  // `@unchecked`: subclasses hold a weak reference and a registrar, both thread-safe; hooks are used on the main
  // actor only.

  init() {}

  /// Tells Observation that the property was read (inside `withObservationTracking`, the read is tracked).
  func access() {}

  /// Tells Observation that the property is about to change (a tracked read's `onChange` runs here).
  func willSet() {}

  /// Tells Observation that the property changed.
  func didSet() {}
}

/// Makes ``ObservationHook``s.
enum ObservationBridge {
  /// The hook of `keyPath` of `model`, or `nil` when the model does not declare `Observable` (or the Observation
  /// framework is not available: before macOS 14, iOS 17, tvOS 17, watchOS 10).
  static func hook<Model: AnyObject, Value>(for model: Model, keyPath: KeyPath<Model, Value>) -> ObservationHook? {
    #if canImport(Observation)
      if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
        guard let observable = model as? any Observable else { return nil }
        return trackedProperty(observable, keyPath)
      }
    #endif
    return nil
  }

  #if canImport(Observation)
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    private static func trackedProperty<Subject: Observable, Model: AnyObject, Value>(
      _ subject: Subject, _ keyPath: KeyPath<Model, Value>
    ) -> ObservationHook? {
      // `Subject` is the model's dynamic type; a key path rooted at a superclass is not one rooted at it.
      guard let keyPath = keyPath as? KeyPath<Subject, Value> else { return nil }
      return TrackedProperty(subject as AnyObject, keyPath)
    }
  #endif
}

#if canImport(Observation)
  /// The hook of one property of an `Observable` model: its own registrar (Observation tracks by registrar and key
  /// path, so one per property works like one per model) and a weak reference to the model, which owns the property.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  final class TrackedProperty<Subject: Observable, Value>: ObservationHook, @unchecked Sendable {
    private weak var model: AnyObject?
    private let keyPath: KeyPath<Subject, Value>
    private let registrar = ObservationRegistrar()

    init(_ model: AnyObject, _ keyPath: KeyPath<Subject, Value>) {
      self.model = model
      self.keyPath = keyPath
    }

    override func access() {
      guard let model else { return }
      // `model` was made from a `Subject`, so the cast always succeeds.
      registrar.access(model as! Subject, keyPath: keyPath)
    }

    override func willSet() {
      guard let model else { return }
      registrar.willSet(model as! Subject, keyPath: keyPath)
    }

    override func didSet() {
      guard let model else { return }
      registrar.didSet(model as! Subject, keyPath: keyPath)
    }
  }
#endif

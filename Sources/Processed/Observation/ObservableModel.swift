/// A class that owns an ``ObserverRegistry``, so that code can observe its properties without macros, Combine or
/// the Observation framework.
///
/// Every change of a property reaches `observe(\.property)` observers exactly once when it is made by
/// - a ``LoadableSupport`` / ``ProcessSupport`` call on that key path (`load(\.numbers) { … }`),
/// - a `@Loadable` or `@Process` property of the model (its loads, yields, resets and manual writes),
/// - an ``Observed`` property (`@Observed var title = ""`), or
/// - a plain property whose `didSet` calls ``notifyObservers(_:)``.
///
/// ```swift
/// @MainActor
/// final class FeedModel: ObservableModel, LoadableSupport {
///   let observers = ObserverRegistry()
///   var feed: LoadableState<[String]> = .absent
///   @Observed var filter = ""
///
///   func refresh() {
///     load(\.feed) { ["first", "second"] }
///   }
/// }
///
/// let model = FeedModel()
/// let token = model.observe(\.feed) { state in print(state) }
/// model.refresh()  // prints .loading, then .loaded(["first", "second"])
/// ```
/// ### SwiftUI and the Observation framework
///
/// A model that also declares the Observation framework's `Observable` protocol — the conformance only, not the
/// `@Observable` macro — gets its `@Loadable`, `@Process` and ``Observed`` properties tracked by Observation:
/// reading one inside `withObservationTracking` (as SwiftUI does while it runs a view's `body`) makes its next change
/// call `onChange`, whichever face made the change. Models that do not declare it pay nothing for this.
///
/// ```swift
/// import Observation
///
/// @MainActor
/// final class TrackedFeedModel: ObservableModel, Observable {
///   let observers = ObserverRegistry()
///   @Loadable var feed: LoadableState<[String]>
/// }
/// ```
///
/// Available where Observation is: Linux, and iOS 17, macOS 14, tvOS 17, watchOS 10 and later.
public protocol ObservableModel: AnyObject {
  /// The registry that delivers this model's changes. Store one: `let observers = ObserverRegistry()`.
  var observers: ObserverRegistry { get }
}

extension ObservableModel {
  /// Calls `onChange` with the new value after every change of the property at `keyPath`.
  ///
  /// The handler runs on the main actor, synchronously after the change. It does not receive the current value on
  /// registration — read it yourself if you need it.
  ///
  /// ```swift
  /// model.observe(\.feed) { state in
  ///   if case .error(let error) = state { log(error) }
  /// }
  /// .store(in: &tokens)
  /// ```
  ///
  /// May be called from any thread. Calling it on a model that is being deallocated returns a token that is never
  /// called and whose `cancel()` does nothing.
  ///
  /// > Important: Observe a property with a key path rooted at the class that declares it. Key paths with different
  /// > roots are different keys, so for a property a subclass inherits, `derived.observe(\.title)` is never called;
  /// > write `(derived as Base).observe(\.title) { … }` instead.
  ///
  /// > Note: A `@Loadable`, `@Process` or ``Observed`` property links itself to the model the first time it is
  /// > read or written through the model on the main actor. Observing from the main actor makes that first read
  /// > for you; when you observe from elsewhere, changes are delivered from the property's first main-actor access
  /// > on.
  ///
  /// - Parameters:
  ///   - keyPath: The observed property.
  ///   - isolation: The caller's isolation; leave the default.
  ///   - onChange: Called with each new value.
  /// - Returns: A token; the observation lasts until it is cancelled or released.
  @inlinable
  public func observe<Value>(
    _ keyPath: KeyPath<Self, Value>,
    isolation: isolated (any Actor)? = #isolation,
    _ onChange: @escaping @MainActor (_ newValue: Value) -> Void
  ) -> ObservationToken {
    let registry = observers
    let slot = registry.slot(for: keyPath, of: Value.self)
    let token = registry.addObserver(to: slot, onChange)
    if let isolation, ObjectIdentifier(isolation) == ObjectIdentifier(MainActor.shared),
      !slot.mainFields.pointee.hasLinkedProperty
    {
      // Reading the property links a wrapper-backed property to this registry; the caller is on the main actor, so the
      // read is made here, without an `assumeIsolated` closure (an allocation).
      _ = self[keyPath: keyPath]
    }
    return token
  }

  /// Tells the observers of `keyPath` that its value changed, passing the current value.
  ///
  /// Use it in the `didSet` of a plain stored property that you want observable without ``Observed``:
  ///
  /// ```swift
  /// var query = "" {
  ///   didSet { notifyObservers(\.query) }
  /// }
  /// ```
  ///
  /// When the write came from a ``LoadableSupport``/``ProcessSupport`` call, this call is absorbed (that call
  /// notifies once itself), so observers still see each change once.
  ///
  /// - Parameter keyPath: The property that changed.
  @inlinable @MainActor
  public func notifyObservers<Value>(_ keyPath: KeyPath<Self, Value>) {
    let registry = observers
    withExtendedLifetime(registry) {
      SlotLink(registry, keyPath).notify(self[keyPath: keyPath])
    }
  }
}

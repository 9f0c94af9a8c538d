/// A property wrapper that holds a ``LoadableState`` and drives it with loads that cancel each other, so the
/// latest load always wins.
///
/// Use it in a view model, a service, a command-line tool or a test — not as a property of a SwiftUI `View`, which
/// neither re-renders for it nor keeps its storage when it re-creates the view. Its projected value (`$numbers`) is a
/// ``LoadableController`` that starts, cancels and resets loads and registers observers.
///
/// ```swift
/// @MainActor
/// final class NumbersModel {
///   @Loadable var numbers: LoadableState<[Int]>
///
///   func refresh() {
///     $numbers.load {
///       try await Task.sleep(for: .milliseconds(10))
///       return [1, 2, 3]
///     }
///   }
/// }
/// ```
///
/// The wrapper has reference semantics: copies share one state, like SwiftUI's `@State`. It works as a stored
/// property of a class or a struct, and standalone (`let numbers = Loadable<[Int]>()`). Inside an
/// ``ObservableModel``, every change also reaches `model.observe(\.numbers)`.
///
/// Writing ``wrappedValue`` cancels a running load, then stores and notifies. When the last copy of the wrapper
/// goes away, its running load is cancelled.
@propertyWrapper
public struct Loadable<Value: Sendable>: Sendable {
  @usableFromInline
  let storage: StateStorage<LoadableState<Value>>

  /// Creates the wrapper with an initial state.
  ///
  /// - Parameter wrappedValue: The initial state; `.absent` unless given.
  @inlinable
  public init(wrappedValue: LoadableState<Value> = .absent) {
    storage = StateStorage(wrappedValue)
  }

  /// Creates the wrapper with an initial state and the options its loads use when a call gives none.
  ///
  /// ```swift
  /// @Loadable(options: LoadOptions(timeout: .seconds(10))) var feed: LoadableState<[String]>
  /// ```
  ///
  /// - Parameters:
  ///   - wrappedValue: The initial state; `.absent` unless given.
  ///   - options: The declaration's options; a call's `options:` replaces them as a whole.
  @inlinable
  public init(wrappedValue: LoadableState<Value> = .absent, options: LoadOptions) {
    storage = StateStorage(wrappedValue, options: options)
  }

  /// The current state. Setting it cancels a running load, then stores the new state and notifies observers.
  @MainActor
  @inlinable
  public var wrappedValue: LoadableState<Value> {
    get { storage.currentState }
    nonmutating set { storage.overwrite(newValue) }
  }

  /// The controller that loads, cancels, resets and observes this state.
  @MainActor
  @inlinable
  public var projectedValue: LoadableController<Value> {
    LoadableController(storage: storage)
  }

  /// Reads and writes the state of a class's property, and links the state to the class's observers when the
  /// class is an ``ObservableModel``. Swift calls this for you; you never call it directly.
  @MainActor
  @inlinable
  public static subscript<EnclosingSelf: AnyObject>(
    _enclosingInstance instance: EnclosingSelf,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, LoadableState<Value>>,
    storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Self>
  ) -> LoadableState<Value> {
    get {
      let storage = instance[keyPath: storageKeyPath].storage
      if WrapperLookup.target != nil { WrapperLookup.offer(storage, for: wrappedKeyPath) }
      return storage.state(in: instance, at: wrappedKeyPath)
    }
    set { instance[keyPath: storageKeyPath].storage.overwrite(newValue, in: instance, at: wrappedKeyPath) }
  }
}

/// A property wrapper that holds a ``ProcessState`` and drives it with runs that cancel each other, so the latest
/// run always wins.
///
/// Where ``Loadable`` loads a value, `@Process` runs an action — saving, deleting, signing in — and records which
/// one runs, failed or finished. Its projected value (`$save`) is a ``ProcessController``.
///
/// ```swift
/// enum Action: Equatable, Sendable { case save, delete }
///
/// @MainActor
/// final class EditorModel {
///   @Process var action: ProcessState<Action>
///   @Process var upload  // a SingleProcessState
///
///   func save() {
///     $action.run(.save) { try await Task.sleep(for: .milliseconds(10)) }
///   }
/// }
/// ```
///
/// The wrapper has reference semantics: copies share one state. It works as a stored property of a class or a
/// struct, and standalone. Inside an ``ObservableModel``, every change also reaches `model.observe(\.action)`.
/// Writing ``wrappedValue`` cancels a running process, then stores and notifies. When the last copy of the wrapper
/// goes away, its running process is cancelled.
///
/// > Tip: Foundation also has a class called `Process`. In a file that imports Foundation, `@Process var save` fails
/// > with "'Process' is ambiguous for type lookup in this context" (and then "type annotation missing in pattern"):
/// > write `@Processed.Process var save` there.
@propertyWrapper
public struct Process<ProcessKind: Equatable & Sendable>: Sendable {
  @usableFromInline
  let storage: StateStorage<ProcessState<ProcessKind>>

  /// Creates the wrapper with an initial state.
  ///
  /// - Parameter wrappedValue: The initial state; `.idle` unless given.
  @inlinable
  public init(wrappedValue: ProcessState<ProcessKind> = .idle) {
    storage = StateStorage(wrappedValue)
  }

  /// Creates the wrapper with an initial state and the options its runs use when a call gives none.
  ///
  /// ```swift
  /// @Process(options: LoadOptions(timeout: .seconds(30))) var upload: ProcessState<Upload>
  /// ```
  ///
  /// - Parameters:
  ///   - wrappedValue: The initial state; `.idle` unless given.
  ///   - options: The declaration's options; a call's `options:` replaces them as a whole.
  @inlinable
  public init(wrappedValue: ProcessState<ProcessKind> = .idle, options: LoadOptions) {
    storage = StateStorage(wrappedValue, options: options)
  }

  /// Creates an idle single-process wrapper with options, so that `@Process(options: o) var save` needs no type.
  ///
  /// ```swift
  /// @Process(options: LoadOptions(timeout: .seconds(30))) var save
  /// ```
  ///
  /// - Parameter options: The declaration's options; a call's `options:` replaces them as a whole.
  @inlinable
  public init(options: LoadOptions) where ProcessKind == SingleProcess {
    storage = StateStorage(.idle, options: options)
  }

  /// Creates an idle single-process wrapper, so that `@Process var save` needs no type.
  @inlinable
  public init() where ProcessKind == SingleProcess {
    storage = StateStorage(.idle)
  }

  /// The current state. Setting it cancels a running process, then stores the new state and notifies observers.
  @MainActor
  @inlinable
  public var wrappedValue: ProcessState<ProcessKind> {
    get { storage.currentState }
    nonmutating set { storage.overwrite(newValue) }
  }

  /// The controller that runs, cancels, resets and observes this process.
  @MainActor
  @inlinable
  public var projectedValue: ProcessController<ProcessKind> {
    ProcessController(storage: storage)
  }

  /// Reads and writes the state of a class's property, and links the state to the class's observers when the
  /// class is an ``ObservableModel``. Swift calls this for you; you never call it directly.
  @MainActor
  @inlinable
  public static subscript<EnclosingSelf: AnyObject>(
    _enclosingInstance instance: EnclosingSelf,
    wrapped wrappedKeyPath: ReferenceWritableKeyPath<EnclosingSelf, ProcessState<ProcessKind>>,
    storage storageKeyPath: ReferenceWritableKeyPath<EnclosingSelf, Self>
  ) -> ProcessState<ProcessKind> {
    get {
      let storage = instance[keyPath: storageKeyPath].storage
      if WrapperLookup.target != nil { WrapperLookup.offer(storage, for: wrappedKeyPath) }
      return storage.state(in: instance, at: wrappedKeyPath)
    }
    set { instance[keyPath: storageKeyPath].storage.overwrite(newValue, in: instance, at: wrappedKeyPath) }
  }
}

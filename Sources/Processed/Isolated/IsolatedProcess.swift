/// A process state owned by an actor of yours: the ``Process`` of an actor, driven through `$name`, an
/// ``IsolatedProcessController``.
///
/// ```swift
/// actor Uploader {
///   @IsolatedProcess var upload: ProcessState<SingleProcess> = .idle
///   private var sent = 0
///
///   func send() async {
///     await $upload.run { self.sent += 1 }
///   }
/// }
/// ```
///
/// The rules of ``IsolatedLoadable`` apply: the block, writes and observers run on the owning actor; the state belongs
/// to the first actor that uses it through its controller; the wrapper and controller are not `Sendable`.
@propertyWrapper
public struct IsolatedProcess<ProcessKind: Equatable & Sendable> {
  /// Copies share one state; when the last copy (and controller) goes, its load is cancelled and `states` end.
  @usableFromInline
  let handle: IsolatedStateHandle<ProcessState<ProcessKind>>
  @inlinable var storage: IsolatedStateStorage<ProcessState<ProcessKind>> { handle.storage }

  /// Creates the state with an initial value and the options of runs that are given none.
  ///
  /// ```swift
  /// @IsolatedProcess var action: ProcessState<Action> = .idle
  /// ```
  ///
  /// - Parameters:
  ///   - wrappedValue: The initial state.
  ///   - options: The options of runs called without `options:`; `nil`: ``LoadOptions/default``.
  public init(wrappedValue: ProcessState<ProcessKind> = .idle, options: LoadOptions? = nil) {
    handle = IsolatedStateHandle(
      IsolatedStateStorage(wrappedValue, options: options, kind: "IsolatedProcess<\(ProcessKind.self)>"))
  }

  /// Creates a state for one kind of process (`@IsolatedProcess var save`).
  ///
  /// ```swift
  /// @IsolatedProcess var save
  /// ```
  ///
  /// - Parameter options: The options of runs called without `options:`; `nil`: ``LoadOptions/default``.
  public init(options: LoadOptions? = nil) where ProcessKind == SingleProcess {
    self.init(wrappedValue: .idle, options: options)
  }

  /// The current state. Writing it cancels the current run, then notifies observers.
  ///
  /// ```swift
  /// upload = .idle  // on the owning actor
  /// ```
  @inlinable
  public var wrappedValue: ProcessState<ProcessKind> {
    get { storage.ownedState }
    nonmutating set { storage.ownedState = newValue }
  }

  /// The controller: `$upload.run { … }`.
  @inlinable
  public var projectedValue: IsolatedProcessController<ProcessKind> {
    IsolatedProcessController(handle: handle)
  }
}

@available(*, unavailable, message: "an actor-owned state stays inside its actor")
extension IsolatedProcess: Sendable {}

/// The controllers of a class's loadable states, by key path: `model.loadables.numbers` is a
/// ``LoadableController`` — the same type as a `@Loadable` property's `$numbers` — acting on `\.numbers` of `model`.
///
/// ```swift
/// @MainActor
/// final class FeedModel: ObservableModel, LoadableSupport {
///   let observers = ObserverRegistry()
///   var feed: LoadableState<[String]> = .absent
/// }
///
/// func showSpinner(for controller: LoadableController<[String]>) -> ObservationToken {
///   controller.observeActivity { activity in print(activity.isActive ? "spinning" : "idle") }
/// }
///
/// let model = FeedModel()
/// let token = showSpinner(for: model.loadables.feed)  // code written for `$x` takes it
/// model.loadables.feed.load { ["first post"] }
/// ```
///
/// Every operation of the controller acts on that key path of that instance, exactly as the key-path calls of
/// ``LoadableSupport`` do (when the property is a `@Loadable` wrapper, the controller is the wrapper's own). The
/// controller holds the model weakly: it never keeps it alive, and once the model is gone its loads do nothing and
/// its state reads `.absent`; on an ``ObservableModel``, `states` ends too (see below for other classes).
///
/// - On an ``ObservableModel``, `observe` and `states` deliver exactly what `model.observe(\.numbers)` does.
/// - On another class, they deliver the changes the library writes (loads, `cancel`, `reset` through the library),
///   not direct writes of the property. Such a class has no registry that ends with it, so the library cannot tell
///   when it goes away, and its `states` may go on after it: cancel the task that iterates it.
/// - `lastValue` of a plain key-path state on an ``ObservableModel`` sees every write the library makes (loads,
///   `cancel`, `reset`), also those made before the controller; on another class, from the moment a controller of
///   that state is first made. `activity` is kept from the moment a controller is first made. Neither sees direct
///   writes of the property, except that `lastValue` is `nil` whenever the state is `.absent`.
/// - `model.loadables.x` of a `@Loadable` property is the wrapper's own controller state, held weakly like the
///   model.
@MainActor @dynamicMemberLookup
public struct LoadableControllers<Model: LoadableSupport> {
  @usableFromInline let model: Model

  init(model: Model) {
    self.model = model
  }

  /// The controller of the state at `keyPath`.
  ///
  /// ```swift
  /// model.loadables.feed.cancel()
  /// ```
  @inlinable
  public subscript<Value: Sendable>(
    dynamicMember keyPath: ReferenceWritableKeyPath<Model, LoadableState<Value>>
  ) -> LoadableController<Value> {
    LoadableController(target: .of(model, keyPath))
  }
}

extension LoadableSupport {
  /// The controllers of this instance's loadable states: `loadables.numbers` is the ``LoadableController`` of
  /// `\.numbers`. See ``LoadableControllers``.
  ///
  /// ```swift
  /// let controller: LoadableController<[Int]> = model.loadables.numbers
  /// controller.load { [1, 2, 3] }
  /// ```
  @MainActor
  public var loadables: LoadableControllers<Self> { LoadableControllers(model: self) }
}

/// The controllers of a class's process states, by key path: `model.processes.saving` is a ``ProcessController`` —
/// the same type as a `@Process` property's `$saving` — acting on `\.saving` of `model`.
///
/// ```swift
/// @MainActor
/// final class EditorModel: ObservableModel, ProcessSupport {
///   let observers = ObserverRegistry()
///   var saving: SingleProcessState = .idle
/// }
///
/// let model = EditorModel()
/// model.processes.saving.run { try await Task.sleep(for: .milliseconds(10)) }
/// ```
///
/// Every operation acts on that key path of that instance, as ``ProcessSupport``'s calls do; the controller holds
/// the model weakly and does nothing once it is gone. Observation follows the rules of ``LoadableControllers``.
@MainActor @dynamicMemberLookup
public struct ProcessControllers<Model: ProcessSupport> {
  @usableFromInline let model: Model

  init(model: Model) {
    self.model = model
  }

  /// The controller of the process state at `keyPath`.
  ///
  /// ```swift
  /// model.processes.saving.reset()
  /// ```
  @inlinable
  public subscript<ProcessKind: Equatable & Sendable>(
    dynamicMember keyPath: ReferenceWritableKeyPath<Model, ProcessState<ProcessKind>>
  ) -> ProcessController<ProcessKind> {
    ProcessController(target: .of(model, keyPath))
  }
}

extension ProcessSupport {
  /// The controllers of this instance's process states: `processes.saving` is the ``ProcessController`` of
  /// `\.saving`. See ``ProcessControllers``.
  ///
  /// ```swift
  /// let controller: ProcessController<SingleProcess> = model.processes.saving
  /// controller.run { try await api.save() }
  /// ```
  @MainActor
  public var processes: ProcessControllers<Self> { ProcessControllers(model: self) }
}

extension StateTarget {
  /// The target of `keyPath` of `model`: the wrapper's storage when the property is a `@Loadable`/`@Process`
  /// wrapper (one state, whichever face; held weakly, like the model), else the key path itself.
  @inlinable @MainActor
  static func of<Model: AnyObject>(_ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>) -> Self {
    if let storage = WrapperLookup.read(model, keyPath).storage {
      return .keyPath(WrapperTargetOf(model: model, storage: storage))
    }
    return .keyPath(KeyPathTargetOf(model: model, keyPath: keyPath))
  }
}

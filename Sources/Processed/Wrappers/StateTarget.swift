/// What a controller (``LoadableController``, ``ProcessController``) drives: the storage of a `@Loadable`/`@Process`
/// wrapper (`$x`), or a key path of a class (`model.loadables.x`, `model.processes.y`). One switch per call; the
/// wrapper case — the common one — calls its storage directly, so `$x` costs what it did.
@usableFromInline
enum StateTarget<State: ManagedState & Sendable> {
  case storage(StateStorage<State>)
  case keyPath(KeyPathTarget<State>)

  @inlinable @MainActor
  var currentState: State {
    switch self {
    case .storage(let storage): storage.currentState
    case .keyPath(let target): target.currentState
    }
  }

  @inlinable @MainActor
  func start(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, priority: TaskPriority?, refreshing: Bool = false
  ) -> Task<Void, Never> {
    switch self {
    case .storage(let storage):
      storage.start(plan, silently: silently, options: options, priority: priority, refreshing: refreshing)
    case .keyPath(let target):
      target.start(plan, silently: silently, options: options, priority: priority, refreshing: refreshing)
    }
  }

  @inlinable @MainActor
  func startAwaited(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, refreshing: Bool = false
  ) -> AwaitedLoad {
    switch self {
    case .storage(let storage):
      storage.startAwaited(plan, silently: silently, options: options, refreshing: refreshing)
    case .keyPath(let target):
      target.startAwaited(plan, silently: silently, options: options, refreshing: refreshing)
    }
  }

  /// A `loadMore` call, Task form: `makePlan` makes its plan from the current state (see ``PageLoad``). `nil`: the
  /// call does nothing.
  @MainActor
  func startLoadMore(
    _ makePlan: (State) -> LoadPlan<State>?, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never>? {
    switch self {
    case .storage(let storage):
      storage.startLoadMore(makePlan(storage.currentState), options: options, priority: priority)
    case .keyPath(let target):
      target.startLoadMore(makePlan, options: options, priority: priority)
    }
  }

  /// A `loadMore` call, `async` form. `nil`: the call does nothing.
  @MainActor
  func startAwaitedLoadMore(_ makePlan: (State) -> LoadPlan<State>?, options: LoadOptions?) -> AwaitedLoad? {
    switch self {
    case .storage(let storage):
      storage.startAwaitedLoadMore(makePlan(storage.currentState), options: options)
    case .keyPath(let target):
      target.startAwaitedLoadMore(makePlan, options: options)
    }
  }

  @MainActor
  func cancelLoad() {
    switch self {
    case .storage(let storage): storage.cancelLoad()
    case .keyPath(let target): target.cancel()
    }
  }

  @MainActor
  func resetState() {
    switch self {
    case .storage(let storage): storage.resetState()
    case .keyPath(let target): target.reset()
    }
  }

  @inlinable @MainActor
  func observe(_ onChange: @escaping @MainActor (State) -> Void) -> ObservationToken {
    switch self {
    case .storage(let storage): storage.observe(onChange)
    case .keyPath(let target): target.observe(onChange)
    }
  }

  @MainActor
  func states() -> AsyncStream<State> {
    switch self {
    case .storage(let storage): storage.states()
    case .keyPath(let target): target.states()
    }
  }

  @MainActor
  var activity: LoadActivity {
    switch self {
    case .storage(let storage): storage.activity
    case .keyPath(let target): target.activity
    }
  }

  @MainActor
  func observeActivity(_ onChange: @escaping @MainActor (LoadActivity) -> Void) -> ObservationToken {
    switch self {
    case .storage(let storage): storage.observeActivity(onChange)
    case .keyPath(let target): target.observeActivity(onChange)
    }
  }

  /// The last state that held a value, while the state holds none.
  @MainActor
  var lastValueState: State? {
    switch self {
    case .storage(let storage): storage.lastValueState
    case .keyPath(let target): target.lastValueState
    }
  }

  /// The wrapper storage (for tests of the wrapper face).
  var storage: StateStorage<State> {
    guard case .storage(let storage) = self else {
      preconditionFailure("Processed: a key-path controller has no wrapper storage")
    }
    return storage
  }
}

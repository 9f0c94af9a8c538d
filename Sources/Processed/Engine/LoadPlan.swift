/// Everything one load or process run needs from its face: the state it starts with and the block to run. The
/// engine does the rest; how a failure is written comes from ``ManagedState``.
@usableFromInline
struct LoadPlan<State: ManagedState>: ShapedPlan {
  @usableFromInline typealias Interrupt = @MainActor (_ accumulatedDelay: Duration) throws -> Void

  /// The block, kept as the caller passed it: wrapping it in another closure would cost an allocation per load.
  @usableFromInline
  enum Work {
    /// Ends with `State.loaded(value)` for the value it returns (`load { value }`).
    case returning(@MainActor () async throws -> State.LoadedValue)
    /// Ends with `State.finished(startedAs:)` when it returns (`run(.save) { … }`).
    case finishing(@MainActor () async throws -> Void)
    /// Writes states through `yield`; returning writes nothing more (`load { yield in … }`).
    case yielding(@MainActor (_ yield: (State) -> Void) async throws -> Void)
    /// Waits until `signal` is raised — a cache entry's fetch ended, or the state was unbound — and then for the
    /// outcome held for the minimum loading time, if any; the entry writes the outcome (`CacheBinding.deliver`).
    /// Nothing in it reports progress or yields, so it runs with no load context, cancellation flag or `yield`.
    case waiting(FirstSignal<Bool>, HeldOutcome?)
  }

  /// The state written when the load starts (`.loading`, `.running(kind)`).
  @usableFromInline let startState: State
  /// The work.
  @usableFromInline let work: Work
  /// What only loads with options, interrupts or a debounce have; `nil` on the plain path (see ``PlanShape``).
  @usableFromInline var shape: PlanShape<Interrupt>?
  /// The four flags below in one byte. A plan is copied into its task and passed down the start; with a stored `Bool`
  /// each, the optimizer copied it through its generic value witness (metadata and a call per field).
  @usableFromInline var flags: UInt8 = 0

  /// Whether the start state is left unwritten (`silently:`); read by a debounced load, which writes it late.
  @inlinable var silently: Bool {
    get { flags & 1 != 0 }
    set { flags = newValue ? flags | 1 : flags & ~1 }
  }
  /// A refresh of a loaded state: an ordinary failure is not written; the error is kept in the activity instead, and
  /// the loaded value stays on screen.
  @inlinable var keepsContent: Bool {
    get { flags & 2 != 0 }
    set { flags = newValue ? flags | 2 : flags & ~2 }
  }
  /// A `loadMore`: a later `loadMore` joins it, and `.joinRunning` does not (see ``PageLoad``).
  @inlinable var appendsPage: Bool {
    get { flags & 4 != 0 }
    set { flags = newValue ? flags | 4 : flags & ~4 }
  }
  /// A cache binding's waiting load for a fetch paused offline: its activity starts as `.paused`.
  @inlinable var startsPaused: Bool {
    get { flags & 8 != 0 }
    set { flags = newValue ? flags | 8 : flags & ~8 }
  }
  /// A `loadMore`'s ``PageRefill``: how a cache entry that holds the list fetches its pages again.
  var pageRefill: AnyObject?

  @inlinable
  init(startState: State, work: Work) {
    self.startState = startState
    self.work = work
  }

  /// The phase the load's activity starts in, when it is not "running the first attempt" (see
  /// ``LoadPhases/firstActivity(debounce:usesLimiter:offline:)``).
  @inlinable @MainActor
  var initialPhase: LoadActivity.Phase? {
    if startsPaused { return .paused }
    guard shape != nil else { return nil }
    let offline = network.map { !$0.isOnline } ?? false
    guard debounce != nil || options?.options.limiter != nil || offline else { return nil }
    return LoadPhases.firstActivity(
      debounce: debounce, usesLimiter: options?.options.limiter != nil, offline: offline)
  }
}

extension LoadPlan {
  /// A load whose block returns the value: starts with `.loading`, ends with `.loaded(value)` or `.error(e)`.
  @inlinable
  static func load<Value>(
    returning block: @escaping @MainActor () async throws -> Value
  ) -> Self where State == LoadableState<Value> {
    LoadPlan(startState: .loading, work: .returning(block))
  }

  /// A load whose block writes states through `yield`.
  @inlinable
  static func load<Value>(
    yielding block: @escaping @MainActor (_ yield: (State) -> Void) async throws -> Void
  ) -> Self where State == LoadableState<Value> {
    LoadPlan(startState: .loading, work: .yielding(block))
  }

  /// A run of `process`: starts with `.running(process)`, fails with `.failed(process:error:)`, finishes with
  /// `.finished(process)`.
  @inlinable
  static func run<Kind: Equatable & Sendable>(
    _ process: Kind,
    _ block: @escaping @MainActor () async throws -> Void
  ) -> Self where State == ProcessState<Kind> {
    LoadPlan(startState: .running(process), work: .finishing(block))
  }
}

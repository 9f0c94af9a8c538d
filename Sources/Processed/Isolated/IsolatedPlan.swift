/// What one load or run of an actor-owned state does: the ``LoadPlan`` of ``IsolatedStateStorage``.
///
/// Its blocks are not `Sendable` and carry no isolation in their type: they are formed on the owning actor and are only
/// ever called there, by the load's task, which runs on that actor.
@usableFromInline
struct IsolatedPlan<State: ManagedState> {
  /// The block types: `nonisolated(nonsending)`, so that a block runs on the executor of its caller — the load's task,
  /// isolated to the owner — also when the closure captures nothing of the actor.
  @usableFromInline typealias Returning = nonisolated(nonsending) () async throws -> State.LoadedValue
  @usableFromInline typealias Finishing = nonisolated(nonsending) () async throws -> Void
  @usableFromInline typealias Yielding = nonisolated(nonsending) (_ yield: (State) -> Void) async throws -> Void

  @usableFromInline
  enum Work {
    /// A block that returns the loaded value (`LoadableState`).
    case returning(Returning)
    /// A block that returns nothing (a process).
    case finishing(Finishing)
    /// A block that writes states through `yield`.
    case yielding(Yielding)
  }

  /// The state written when the load starts (`.loading`, `.running(kind)`).
  @usableFromInline let startState: State
  @usableFromInline let work: Work
  /// The delays between interrupts and what runs after each; no interrupts when empty.
  @usableFromInline var interrupts: [Duration] = []
  @usableFromInline var onInterrupt: ((_ accumulatedDelay: Duration) throws -> Void)?
  /// The call's options, resolved against the declaration's; `nil`: `LoadOptions.default`.
  @usableFromInline var options: LoadOptions.Resolved?
  /// The debounce delay the load waits before it starts; `nil`: it starts at once.
  @usableFromInline var debounce: Duration?
  /// The call a `.leading` debounce measured from.
  @usableFromInline var debounceOrigin: LoadCallMark?
  /// The place in its limiter's queue that the call reserved.
  @usableFromInline var ticket: PermitTicket?
  /// Whether the start state is not written (a silent load, or a refresh of a value).
  @usableFromInline var silently = false
  /// A refresh of a value: an ordinary failure keeps the value and is kept in the activity.
  @usableFromInline var keepsContent = false

  @inlinable
  init(startState: State, work: Work) {
    self.startState = startState
    self.work = work
  }

  /// Whether the load needs the phase driver (options or interrupts); a plain load runs its block once.
  @usableFromInline
  var needsPhases: Bool { options != nil || !interrupts.isEmpty || debounce != nil }

  /// The clock the load's waits use.
  @usableFromInline
  var clock: any Clock<Duration> { options?.clock ?? ContinuousClock() }

  /// The failure state `error` writes.
  @inlinable
  func failure(_ error: any Error) -> State {
    State.failure(error, startedAs: startState)
  }

  /// The same plan with interrupts.
  @inlinable
  func interrupted(by interrupts: [Duration], _ onInterrupt: @escaping (_ accumulatedDelay: Duration) throws -> Void)
    -> Self
  {
    var plan = self
    plan.interrupts = interrupts
    plan.onInterrupt = onInterrupt
    return plan
  }
}

extension IsolatedPlan {
  @inlinable
  static func load<Value>(returning block: nonisolated(nonsending) @escaping () async throws -> Value) -> Self
  where State == LoadableState<Value> {
    IsolatedPlan(startState: .loading, work: .returning(block))
  }

  @inlinable
  static func load<Value>(
    yielding block: nonisolated(nonsending) @escaping (_ yield: (State) -> Void) async throws -> Void
  ) -> Self
  where State == LoadableState<Value> {
    IsolatedPlan(startState: .loading, work: .yielding(block))
  }

  @inlinable
  static func run<Kind: Equatable & Sendable>(
    _ process: Kind, _ block: nonisolated(nonsending) @escaping () async throws -> Void
  ) -> Self
  where State == ProcessState<Kind> {
    IsolatedPlan(startState: .running(process), work: .finishing(block))
  }
}

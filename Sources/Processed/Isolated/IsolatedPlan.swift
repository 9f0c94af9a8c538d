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
  /// What only a load with options, interrupts or a debounce has, boxed: a plain load's plan stays two words and two
  /// flags, cheap to copy into its task.
  @usableFromInline var shape: IsolatedPlanShape<State>?

  /// The delays between interrupts; no interrupts when empty.
  @inlinable var interrupts: [Duration] {
    get { shape?.interrupts ?? [] }
    set { reshape { $0.interrupts = newValue } }
  }

  /// What runs after each interrupt delay.
  @inlinable var onInterrupt: ((_ accumulatedDelay: Duration) throws -> Void)? {
    get { shape?.onInterrupt }
    set { reshape { $0.onInterrupt = newValue } }
  }

  /// The call's options, resolved against the declaration's; `nil`: `LoadOptions.default`.
  @inlinable var options: LoadOptions.Resolved? {
    get { shape?.options }
    set { if newValue != nil || shape != nil { reshape { $0.options = newValue } } }
  }

  /// The debounce delay the load waits before it starts; `nil`: it starts at once.
  @inlinable var debounce: Duration? {
    get { shape?.debounce }
    set { reshape { $0.debounce = newValue } }
  }

  /// The call a `.leading` debounce measured from.
  @inlinable var debounceOrigin: LoadCallMark? {
    get { shape?.debounceOrigin }
    set { reshape { $0.debounceOrigin = newValue } }
  }

  /// The place in its limiter's queue that the call reserved.
  @inlinable var ticket: PermitTicket? {
    get { shape?.ticket }
    set { reshape { $0.ticket = newValue } }
  }

  /// Changes the box, copying it first when another plan shares it.
  @inlinable
  mutating func reshape(_ change: (IsolatedPlanShape<State>) -> Void) {
    if isKnownUniquelyReferenced(&shape) {
      change(shape.unsafelyUnwrapped)
    } else {
      let copy = shape?.copy() ?? IsolatedPlanShape()
      change(copy)
      shape = copy
    }
  }

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
  @inlinable
  var needsPhases: Bool { shape != nil && (options != nil || !interrupts.isEmpty || debounce != nil) }

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

/// The rarely used parts of an ``IsolatedPlan``.
@usableFromInline
final class IsolatedPlanShape<State: ManagedState> {
  @usableFromInline var interrupts: [Duration] = []
  @usableFromInline var onInterrupt: ((_ accumulatedDelay: Duration) throws -> Void)?
  @usableFromInline var options: LoadOptions.Resolved?
  @usableFromInline var debounce: Duration?
  @usableFromInline var debounceOrigin: LoadCallMark?
  @usableFromInline var ticket: PermitTicket?

  @inlinable
  init() {}

  @inlinable
  func copy() -> IsolatedPlanShape {
    let copy = IsolatedPlanShape()
    copy.interrupts = interrupts
    copy.onInterrupt = onInterrupt
    copy.options = options
    copy.debounce = debounce
    copy.debounceOrigin = debounceOrigin
    copy.ticket = ticket
    return copy
  }
}

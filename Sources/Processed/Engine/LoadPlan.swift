/// Everything one load or process run needs from its face: the state it starts with and the block to run. The
/// engine does the rest; how a failure is written comes from ``ManagedState``.
@usableFromInline
struct LoadPlan<State: ManagedState> {
  /// The block, kept as the caller passed it: wrapping it in another closure would cost an allocation per load.
  @usableFromInline
  enum Work {
    /// Ends with `State.loaded(value)` for the value it returns (`load { value }`).
    case returning(@MainActor () async throws -> State.LoadedValue)
    /// Ends with `State.finished(startedAs:)` when it returns (`run(.save) { … }`).
    case finishing(@MainActor () async throws -> Void)
    /// Writes states through `yield`; returning writes nothing more (`load { yield in … }`).
    case yielding(@MainActor (_ yield: (State) -> Void) async throws -> Void)
  }

  /// The state written when the load starts (`.loading`, `.running(kind)`).
  @usableFromInline let startState: State
  /// The work.
  @usableFromInline let work: Work
  /// What only loads with options, interrupts or a debounce have; `nil` on the plain path (see ``LoadPlanShape``).
  @usableFromInline var shape: LoadPlanShape?
  /// Whether the start state is left unwritten (`silently:`); read by a debounced load, which writes it late.
  @usableFromInline var silently = false
  /// A refresh of a loaded state: an ordinary failure is not written; the error is kept in the activity instead, and
  /// the loaded value stays on screen.
  @usableFromInline var keepsContent = false
  /// A `loadMore`: a later `loadMore` joins it, and `.joinRunning` does not (see ``PageLoad``).
  @usableFromInline var appendsPage = false

  /// Delays after which `onInterrupt` is called; they accumulate.
  @inlinable var interrupts: [Duration] {
    get { shape?.interrupts ?? [] }
    set { reshape { $0.interrupts = newValue } }
  }

  /// Called after each interrupt delay with the accumulated delay; its errors end the load.
  @inlinable var onInterrupt: (@MainActor (_ accumulatedDelay: Duration) throws -> Void)? {
    get { shape?.onInterrupt }
    set { reshape { $0.onInterrupt = newValue } }
  }

  /// The load's options; `nil`: `LoadOptions.default`.
  @inlinable var options: LoadOptions.Resolved? {
    get { shape?.options }
    set { reshape { $0.options = newValue } }
  }

  /// How long the load waits before it starts (a debounce), or `nil` when it starts at once. A debounced load writes
  /// its start state after the wait, not when it is called.
  @inlinable var debounce: Duration? {
    get { shape?.debounce }
    set { reshape { $0.debounce = newValue } }
  }

  /// When the debounced call was made: the debounce is measured from there, not from when the load's task began
  /// to wait.
  @inlinable var debounceOrigin: LoadCallMark? {
    get { shape?.debounceOrigin }
    set { reshape { $0.debounceOrigin = newValue } }
  }

  /// The place in the limiter's queue taken when the load was called (see ``LoadLimiter/reserve()``), which its first
  /// attempt claims; `nil` without a limiter, and for a debounced load (it queues once its debounce is over).
  @inlinable var ticket: PermitTicket? {
    get { shape?.ticket }
    set { reshape { $0.ticket = newValue } }
  }

  /// Changes the shape, copied first unless this plan holds the only reference to it (copy on write).
  @usableFromInline
  mutating func reshape(_ change: (LoadPlanShape) -> Void) {
    // Asked before binding the box: a binding is a second reference.
    if isKnownUniquelyReferenced(&shape) {
      change(shape.unsafelyUnwrapped)
    } else {
      let copy = shape?.copy() ?? LoadPlanShape()
      change(copy)
      shape = copy
    }
  }

  /// The clock every wait of the load sleeps on.
  @usableFromInline
  var clock: any Clock<Duration> { options?.clock ?? ContinuousClock() }

  @inlinable
  init(startState: State, work: Work) {
    self.startState = startState
    self.work = work
  }

  /// The phase the load's activity starts in, when it is not "running the first attempt" (see
  /// ``LoadPhases/firstActivity(debounce:usesLimiter:)``).
  @inlinable
  var initialPhase: LoadActivity.Phase? {
    guard debounce != nil || options?.options.limiter != nil else { return nil }
    return LoadPhases.firstActivity(debounce: debounce, usesLimiter: options?.options.limiter != nil)
  }

  /// The state an ordinary error thrown by the block or `onInterrupt` writes.
  @inlinable
  func failure(_ error: any Error) -> State {
    State.failure(error, startedAs: startState)
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

  /// The same plan with interrupts.
  @inlinable
  func interrupted(
    by interrupts: [Duration],
    _ onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) -> Self {
    var plan = self
    plan.interrupts = interrupts
    plan.onInterrupt = onInterrupt
    return plan
  }
}

/// The part of a ``LoadPlan`` that only loads with options, interrupts or a debounce have, kept out of line so that a
/// plain plan, copied a few times per load, is a few words (measured: a tenth of a back-to-back load).
///
/// Copied on write (``LoadPlan/reshape(_:)``).
@usableFromInline
final class LoadPlanShape {
  @usableFromInline var interrupts: [Duration] = []
  @usableFromInline var onInterrupt: (@MainActor (_ accumulatedDelay: Duration) throws -> Void)?
  @usableFromInline var options: LoadOptions.Resolved?
  @usableFromInline var debounce: Duration?
  @usableFromInline var debounceOrigin: LoadCallMark?
  @usableFromInline var ticket: PermitTicket?

  @usableFromInline
  init() {}

  /// A shape with the same fields.
  @usableFromInline
  func copy() -> LoadPlanShape {
    let copy = LoadPlanShape()
    copy.interrupts = interrupts
    copy.onInterrupt = onInterrupt
    copy.options = options
    copy.debounce = debounce
    copy.debounceOrigin = debounceOrigin
    copy.ticket = ticket
    return copy
  }
}

/// How a load ended, before the engine checks that it may still write.
@usableFromInline
enum LoadOutcome<State> {
  /// Write this state (a returned value, a failure).
  case write(State)
  /// Nothing more to write (a yielding block returned, or the block threw `CancellationError`).
  case done
  /// `CancelLoadable` / `CancelProcess`: act as `cancel()`.
  case cancel
  /// `ResetLoadable` / `ResetProcess`: act as `reset()`.
  case reset

  /// Classifies an error thrown by a block or by `onInterrupt`.
  @inlinable
  init(error: any Error, failure: (any Error) -> State) {
    switch error {
    case is CancelLoadable, is CancelProcess: self = .cancel
    case is ResetLoadable, is ResetProcess: self = .reset
    case is CancellationError: self = .done
    default: self = .write(failure(error))
    }
  }
}

extension LoadOutcome: Sendable where State: Sendable {}

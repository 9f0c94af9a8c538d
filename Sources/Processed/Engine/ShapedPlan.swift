/// A load's plan as both engines' drivers read it: its start state and its ``PlanShape``. ``LoadPlan`` (main actor)
/// and ``IsolatedPlan`` (any actor) differ only in their blocks' types; what they keep out of line, and how they
/// change it, is written once here.
@usableFromInline
protocol ShapedPlan {
  associatedtype State: ManagedState
  /// The type of `onInterrupt`.
  associatedtype Interrupt
  /// The state written when the load starts (`.loading`, `.running(kind)`).
  var startState: State { get }
  /// What only loads with options, interrupts or a debounce have; `nil` on the plain path.
  var shape: PlanShape<Interrupt>? { get set }
  /// Whether the load writes no start state.
  var silently: Bool { get set }
}

extension ShapedPlan {
  /// Delays after which `onInterrupt` is called; they accumulate.
  @inlinable var interrupts: [Duration] {
    get { shape?.interrupts ?? [] }
    set { reshape { $0.interrupts = newValue } }
  }

  /// Called after each interrupt delay with the accumulated delay; its errors end the load.
  @inlinable var onInterrupt: Interrupt? {
    get { shape?.onInterrupt }
    set { reshape { $0.onInterrupt = newValue } }
  }

  /// The load's options; `nil`: `LoadOptions.default`. Setting `nil` on a plain plan makes no shape.
  @inlinable var options: LoadOptions.Resolved? {
    get { shape?.options }
    set { if newValue != nil || shape != nil { reshape { $0.options = newValue } } }
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

  /// Makes this a debounced load (``LoadStart/debounced(_:)``): it waits `delay` from the call `origin`, then
  /// writes its start state unless `silently` — the writes it defers until then.
  @inlinable
  mutating func debounce(by delay: Duration, from origin: LoadCallMark?, silently: Bool) {
    reshape {
      $0.debounce = delay
      $0.debounceOrigin = origin
    }
    self.silently = silently
  }

  /// The place in the limiter's queue taken when the load was called (see ``LoadLimiter/reserve()``), which its first
  /// attempt claims; `nil` without a limiter, and for a debounced load (it queues once its debounce is over).
  @inlinable var ticket: PermitTicket? {
    get { shape?.ticket }
    set { reshape { $0.ticket = newValue } }
  }

  /// Whom each attempt asks for the network first (a cache's fetch under ``NetworkMode/online``); `nil`: it never
  /// waits for the network.
  @inlinable var network: (any NetworkGate)? {
    get { shape?.network }
    set { if newValue != nil || shape != nil { reshape { $0.network = newValue } } }
  }

  /// Changes the shape, copied first unless this plan holds the only reference to it (copy on write).
  @inlinable
  mutating func reshape(_ change: (PlanShape<Interrupt>) -> Void) {
    // Asked before binding the box: a binding is a second reference.
    if isKnownUniquelyReferenced(&shape) {
      change(shape.unsafelyUnwrapped)
    } else {
      let copy = shape?.copy() ?? PlanShape()
      change(copy)
      shape = copy
    }
  }

  /// The clock every wait of the load sleeps on.
  @inlinable
  var clock: any Clock<Duration> { LoadOptions.clock(of: options) }

  /// The state an ordinary error thrown by the block or `onInterrupt` writes.
  @inlinable
  func failure(_ error: any Error) -> State {
    State.failure(error, startedAs: startState)
  }

  /// The same plan with interrupts.
  @inlinable
  func interrupted(by interrupts: [Duration], _ onInterrupt: Interrupt) -> Self {
    var plan = self
    plan.interrupts = interrupts
    plan.onInterrupt = onInterrupt
    return plan
  }
}

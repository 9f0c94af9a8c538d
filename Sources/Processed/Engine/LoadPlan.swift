/// Everything one load or process run needs from its face: which state it starts with, how a failure is written,
/// and the block to run. The engine does the rest.
struct LoadPlan<State: ManagedState> {
  /// The state written when the load starts (`.loading`, `.running(kind)`).
  let startState: State
  /// Whether a state already is exactly `startState` (then nothing is written at the start).
  let isStarted: (State) -> Bool
  /// The state written when the block (or `onInterrupt`) throws an ordinary error.
  let failure: (any Error) -> State
  /// The work. It may write intermediate states through `yield`; its result, if any, is written when it returns.
  let body: @MainActor (_ yield: (State) -> Void) async throws -> State?
  /// Delays after which `onInterrupt` is called; they accumulate.
  var interrupts: [Duration] = []
  /// Called after each interrupt delay with the accumulated delay; its errors end the load.
  var onInterrupt: (@MainActor (_ accumulatedDelay: Duration) throws -> Void)?
}

extension LoadPlan {
  /// A load of `LoadableState<Value>`: starts with `.loading`, fails with `.error(e)`.
  static func load<Value>(
    _ body: @escaping @MainActor (_ yield: (State) -> Void) async throws -> State?
  ) -> Self where State == LoadableState<Value> {
    LoadPlan(startState: .loading, isStarted: \.isLoading, failure: { .error($0) }, body: body)
  }

  /// A run of `process`: starts with `.running(process)`, fails with `.failed(process:error:)`, finishes with
  /// `.finished(process)`.
  static func run<Kind: Equatable & Sendable>(
    _ process: Kind,
    _ block: @escaping @MainActor () async throws -> Void
  ) -> Self where State == ProcessState<Kind> {
    LoadPlan(
      startState: .running(process),
      isStarted: { $0.isRunning(process) },
      failure: { .failed(process: process, error: $0) },
      body: { _ in
        try await block()
        return .finished(process)
      }
    )
  }

  /// The same plan with interrupts.
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

/// How a load ended, before the engine checks that it may still write.
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
  init(error: any Error, failure: (any Error) -> State) {
    switch error {
    case is CancelLoadable, is CancelProcess: self = .cancel
    case is ResetLoadable, is ResetProcess: self = .reset
    case is CancellationError: self = .done
    default: self = .write(failure(error))
    }
  }
}

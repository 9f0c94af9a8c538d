/// What one load or run of an actor-owned state does: the ``LoadPlan`` of ``IsolatedStateStorage``.
///
/// Its blocks are not `Sendable` and carry no isolation in their type: they are formed on the owning actor and are only
/// ever called there, by the load's task, which runs on that actor.
@usableFromInline
struct IsolatedPlan<State: ManagedState>: ShapedPlan {
  /// The block types: `nonisolated(nonsending)`, so that a block runs on the executor of its caller — the load's task,
  /// isolated to the owner — also when the closure captures nothing of the actor.
  @usableFromInline typealias Returning = nonisolated(nonsending) () async throws -> State.LoadedValue
  @usableFromInline typealias Finishing = nonisolated(nonsending) () async throws -> Void
  @usableFromInline typealias Yielding = nonisolated(nonsending) (_ yield: (State) -> Void) async throws -> Void
  /// Called on the owning actor, by the load's task.
  @usableFromInline typealias Interrupt = (_ accumulatedDelay: Duration) throws -> Void

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
  @usableFromInline var shape: PlanShape<Interrupt>?

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

extension IsolatedPlan {
  /// Runs the block once, on the owner `isolation` (the load's task), and returns the load's outcome; `yield` writes a
  /// yielded state. `thrown` receives the error the block threw, if any. Both the plain path and the phase driver
  /// call it (``IsolatedStateStorage``). Its parameter is `isolated`, not `nonisolated(nonsending)`: called from the
  /// plain path's function, which is isolated to the same actor, it costs what the switch written out there did (the
  /// `nonisolated(nonsending)` form measured 5–7 % slower on the actor-owned load cycle; Performance.md, "One phase
  /// driver for every owner").
  @inlinable @inline(__always)
  func run(
    thrown: inout (any Error)?, isolation: isolated (any Actor)? = #isolation, yield: (State) -> Void
  ) async -> LoadOutcome<State> {
    do {
      switch work {
      case .returning(let block):
        return .loaded(try await block())
      case .finishing(let block):
        try await block()
        return .finished(startedAs: startState)
      case .yielding(let block):
        try await block(yield)
        return .done
      }
    } catch {
      thrown = error
      return LoadOutcome(error: error, failure: failure)
    }
  }
}

/// The loads of an actor-owned state: start, latest wins, outcomes, cancel and reset — the rules of `StateHost`'s
/// engine (Engine.swift), for a state whose owner is any actor. See Documentation/IsolatedLoads.md.
extension IsolatedStateStorage {
  /// Starts a load described by `plan` on the owner `isolation` and returns its task.
  ///
  /// `refreshing`: from a state that holds a value, no start state is written and an ordinary failure keeps the value.
  @inlinable
  func start(
    _ plan: consuming IsolatedPlan<State>, silently: Bool, options: LoadOptions?, priority: TaskPriority?,
    refreshing: Bool = false, isolation: isolated (any Actor)
  ) -> Task<Void, Never> {
    claim(isolation)
    var silently = silently
    if refreshing, state.holdsValue {
      plan.keepsContent = true
      silently = true
    }
    // Compared with `nil` before it is bound: binding a `LoadOptions?` copies it whole, also when it is `nil`.
    guard let resolved = options != nil ? options.map(LoadOptions.Resolved.init) : declaredOptions else {
      LoadCallMark.note(&lastLoadCall, on: plan.clock)
      return launch(plan, writingStartState: !silently, priority: priority, isolation: isolation)
    }
    plan.options = resolved
    let joinable = tracker.isJoinable || mirroredLoadIsJoinable
    switch LoadStart.decide(resolved.options, joinable: joinable, lastLoadCall: &lastLoadCall) {
    case .join:
      if let joined = joinRunningLoad(priority: priority, isolation: isolation) { return joined }
      return launch(plan, writingStartState: !silently, priority: priority, isolation: isolation)
    case .now:
      return launch(plan, writingStartState: !silently, priority: priority, isolation: isolation)
    case .debounced(let delay):
      plan.debounce(by: delay, from: lastLoadCall, silently: silently)
      return launch(plan, writingStartState: false, priority: priority, isolation: isolation)
    }
  }

  /// Supersedes the current load and starts `plan` as the new current load: a fresh id, its task, then the start
  /// state (when `writingStartState`, unless the state already is exactly that).
  @inlinable
  func launch(
    _ plan: consuming IsolatedPlan<State>, writingStartState: Bool, priority: TaskPriority?,
    isolation: isolated (any Actor)
  ) -> Task<Void, Never> {
    if followsMirror { unfollowMirror(restoring: false) }
    clear()?.cancel()
    // A limited load queues when it is called (a debounced one once its debounce is over).
    var reserved: (limiter: LoadLimiter, ticket: PermitTicket)?
    if plan.debounce == nil, let limiter = plan.options?.options.limiter {
      let ticket = limiter.reserve()
      plan.ticket = ticket
      reserved = (limiter, ticket)
    }
    lastID &+= 1
    let id = lastID
    let startState = plan.startState
    let usesLimiter = plan.options?.options.limiter != nil
    let firstPhase =
      plan.debounce != nil || usesLimiter
      ? LoadPhases.firstActivity(debounce: plan.debounce, usesLimiter: usesLimiter) : nil
    // Isolated to the owner (it uses `isolation`), so it runs there and may hold this storage.
    let task =
      plan.needsPhases
      ? Task(priority: priority) { [plan] in await self.executePhases(plan, id: id, isolation: isolation) }
      : makePlainTask(plan, id: id, priority: priority, isolation: isolation)
    tracker.begin(id, task: task)
    tracker.reservation = reserved
    phase = firstPhase
    progress = nil
    if writingStartState, !state.isAlready(startState) {
      store(startState)
    }
    publishActivity()
    return task
  }

  /// The task of a plain load: isolated to `isolation` typed as the optional that ``execute(_:id:isolation:)`` takes,
  /// so that the task's first hop and the body's are to one value, and the optimizer drops the second.
  @inlinable @inline(__always)
  func makePlainTask(
    _ plan: consuming IsolatedPlan<State>, id: UInt64, priority: TaskPriority?, isolation: isolated (any Actor)?
  ) -> Task<Void, Never> {
    Task(priority: priority) { [plan] in await self.execute(plan, id: id, isolation: isolation) }
  }

  /// Starts a load for an `async` caller and returns what the caller waits for: the load's id and task. The caller
  /// then waits (``IsolatedAwaitedLoad/wait(isolation:)``) until the load stops being current (it ended, or was
  /// superseded, cancelled or reset).
  ///
  /// The caller's own task cancelled by this start (a nested load supersedes its caller) is not forwarded.
  @inlinable
  func startAwaited(
    _ plan: consuming IsolatedPlan<State>, silently: Bool, options: LoadOptions?, refreshing: Bool = false,
    isolation: isolated (any Actor)
  ) -> IsolatedAwaitedLoad<State> {
    // Only a start that supersedes a running load can cancel the caller's own task (a load the block started).
    let callerWasCancelled = !tracker.isRunning || Task.isCancelled
    let launches = lastID
    let task = start(
      plan, silently: silently, options: options, priority: nil, refreshing: refreshing, isolation: isolation)
    let forwards = callerWasCancelled || !Task.isCancelled
    // A call that joined a running load (`.joinRunning`) launched nothing: it waits for the task that joins it.
    return IsolatedAwaitedLoad(
      storage: self, task: task, id: lastID != launches ? lastID : 0, forwardsCancellation: forwards)
  }

  /// Resumes `waiter` when load `id` stops being current: at once when it already has (an observer of its start
  /// state started, cancelled or reset a load), otherwise from ``clear()``.
  @inlinable
  func resume(_ waiter: UnsafeContinuation<Void, Never>, whenLoadStops id: UInt64) {
    guard tracker.isCurrent(id) else {
      waiter.resume()
      return
    }
    // A load has at most one `async` caller (a joining call waits on its task): none is parked yet.
    assert(awaitedBy == nil, "Processed: a second async caller parked for one actor-owned load")
    awaitedBy = waiter
  }

  /// The `async` caller of load `id` was cancelled: the load is cancelled, if it is still current (which tells the
  /// caller).
  @usableFromInline
  func stopAwaitedLoad(_ id: UInt64, isolation: isolated (any Actor)) {
    guard tracker.isCurrent(id) else { return }
    cancelLoad()
  }

  /// Forgets the current load and returns its task (which the caller may cancel). Calls waiting for it return now.
  @inlinable
  func clear() -> Task<Void, Never>? {
    let task = tracker.clear()
    if let awaitedBy {
      self.awaitedBy = nil
      awaitedBy.resume()
    }
    phase = nil
    progress = nil
    return task
  }

  /// Cancels the current load, if any. The state stays as it is.
  @inlinable
  func cancelLoad(restoring: Bool = true) {
    if followsMirror {
      unfollowMirror(restoring: restoring)
      publishActivity()
    }
    guard tracker.isRunning else { return }
    clear()?.cancel()
    publishActivity()
  }

  /// Cancels the current load and writes the reset state (`.absent`, `.idle`) unless the state already is that.
  @inlinable
  func resetState() {
    keepError(nil)
    cancelLoad(restoring: false)
    if !state.isResetState { store(State.resetState) }
    publishActivity()
  }

  /// Whether the load `id` may still write (``LoadTracker/mayWrite(_:)``).
  @inlinable
  func mayWrite(_ id: UInt64) -> Bool { tracker.mayWrite(id) }

  /// Ends load `id` with `outcome`, if it may still write; otherwise only drops it if it is current.
  @inlinable
  func finish(_ id: UInt64, with outcome: LoadOutcome<State>, keepingContent: Bool) {
    switch tracker.ending(id) {
    case .superseded: return
    case .cancelled: return cancelLoad()
    case .writesOutcome: break
    }
    switch outcome {
    case .write(let new):
      let writes = LoadOutcome.writes(new, keepingContent: keepingContent) { keepError($0) }
      // The `async` caller is told after the final write (observers see it first).
      let awaited = awaitedBy
      awaitedBy = nil
      _ = clear()
      if writes { store(new) }
      publishActivity()
      awaited?.resume()
    case .done:
      keepError(nil)
      _ = clear()
      publishActivity()
    case .cancel:
      cancelLoad()
    case .reset:
      resetState()
    }
  }
}

/// A load an `async` caller of an actor-owned state waits for.
@usableFromInline
struct IsolatedAwaitedLoad<State: ManagedState & Sendable> {
  @usableFromInline let storage: IsolatedStateStorage<State>
  @usableFromInline let task: Task<Void, Never>
  /// `0` for a call that joined a running load: it waits for the task `start` returned, which ends with that load.
  @usableFromInline let id: UInt64
  @usableFromInline let forwardsCancellation: Bool

  @inlinable
  init(storage: IsolatedStateStorage<State>, task: Task<Void, Never>, id: UInt64, forwardsCancellation: Bool) {
    self.storage = storage
    self.task = task
    self.id = id
    self.forwardsCancellation = forwardsCancellation
  }

  /// Returns when the load stops being current, after its final write. Cancelling the calling task cancels the load
  /// and returns as soon as the owner has stopped it, without waiting for a block that ignores cancellation.
  ///
  /// The waiting continuation is kept by the storage and resumed on the owner, once: by ``IsolatedStateStorage/clear()``
  /// or at once when the load is no longer current. A cancelled caller stops the load through a job on the owner.
  @inlinable
  func wait(isolation: isolated (any Actor)) async {
    let (storage, task, id) = (storage, task, id)
    guard id != 0 else {
      // A joining call: cancelling it ends only it (its task), never the load it joined.
      await withTaskCancellationHandler {
        await task.value
      } onCancel: {
        task.cancel()
      }
      return
    }
    guard forwardsCancellation else {
      await withUnsafeContinuation(isolation: isolation) { storage.resume($0, whenLoadStops: id) }
      return
    }
    await withTaskCancellationHandler {
      await withUnsafeContinuation(isolation: isolation) { storage.resume($0, whenLoadStops: id) }
    } onCancel: { [isolation] in
      task.cancel()
      Task { await storage.stopAwaitedLoad(id, isolation: isolation) }
    }
  }
}

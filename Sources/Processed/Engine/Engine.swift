/// The one engine behind every load and process, wrapper and key path alike: start, latest wins (`mayWrite`), outcomes,
/// cancel and reset, written once.
///
/// The task never keeps its host alive (it holds the host's `HostReference`). See Documentation/LoadPhases.md.
extension StateHost {
  /// Starts a load described by `plan` and returns its task.
  ///
  /// `currentState`: the state as the caller just read it, when it can read it more cheaply (`nil`: the host reads it).
  /// `refreshing`: from a state that holds a value, no start state is written and an ordinary failure keeps the value
  /// (see `finish`).
  @inlinable @discardableResult
  func start(
    _ plan: consuming LoadPlan<State>, silently: Bool, options: LoadOptions? = nil, priority: TaskPriority?,
    currentState: State? = nil, refreshing: Bool = false
  ) -> Task<Void, Never> {
    // `plan` is consumed, not copied: a plan's copy goes through its value witness (it holds closures and a state).
    var silently = silently
    if refreshing, (currentState ?? self.currentState).holdsValue {
      plan.keepsContent = true
      silently = true
    }
    // The call's options, decided once: its own, else the declaration's. Options that change nothing for this load
    // (`.default`, or a clock for waits it does not make) leave it on the plain path: no box, no phases.
    let resolved = resolveOptions(options, interrupted: !plan.interrupts.isEmpty)
    if let resolved, !resolved.isPlain || !plan.interrupts.isEmpty { plan.options = resolved }
    if let resolved, resolved.shapesTheStart {
      return startShaped(plan, resolved, silently: silently, priority: priority, currentState: currentState)
    }
    noteLoadCall(on: resolved)
    return launch(plan, writingStartState: !silently, priority: priority, currentState: currentState)
  }

  /// A call's options resolved against the declaration's: `options` when given, else the declared ones; `nil` means
  /// `LoadOptions.default`. Given options that ask for nothing are not boxed unless their clock can matter (the load
  /// has interrupts, or the state times its calls for a `.leading` debounce).
  @inlinable
  func resolveOptions(_ options: LoadOptions?, interrupted: Bool) -> LoadOptions.Resolved? {
    // Compared with `nil` before it is bound: binding a `LoadOptions?` copies it whole, also when it is `nil`.
    guard options != nil, let options else { return declaredOptions }
    if options.isPlain, !interrupted, lastLoadCall == nil { return nil }
    return LoadOptions.Resolved(options)
  }

  /// A load call that is not debounced: a `.leading` debounce starts at once only when the state had no load call
  /// within its duration. Once a state has had a debounced call, every later call is timed too, on its resolved
  /// options' clock; the calls before it are not, so that a state that never debounces pays nothing for it.
  ///
  /// Read first, not passed `inout` to ``LoadCallMark/note(_:on:)``: `lastLoadCall` is a computed property of some
  /// hosts, and an `inout` access always writes it back (a key-path state would make its extras on every load).
  @inlinable
  func noteLoadCall(on options: LoadOptions.Resolved?) {
    if lastLoadCall != nil { lastLoadCall = LoadCallMark(LoadOptions.clock(of: options)) }
  }

  /// Supersedes the current load and starts `plan` as the new current load: a fresh id, its task, then the start
  /// state (when `writingStartState`, unless the state already is exactly that).
  @inlinable @inline(__always)
  func launch(
    _ plan: consuming LoadPlan<State>, writingStartState: Bool, priority: TaskPriority?, currentState: State?
  ) -> Task<Void, Never> {
    stateWillChange()
    let superseded = tracker.screen
    tracker.clear()?.cancel()
    // A limited load queues when it is called (a debounced one once its debounce is over, a paused one once the
    // network is back).
    var reservation: (limiter: LoadLimiter, ticket: PermitTicket)?
    if plan.debounce == nil, let limiter = plan.options?.options.limiter, plan.network?.isOnline != false {
      let ticket = limiter.reserve()
      plan.ticket = ticket
      reservation = (limiter, ticket)
    }
    let id = LoadTracker.nextID()
    let host = hostReference
    // What the rest reads of the plan, read before the plan goes to the task; the whole plan is copied only for a calm
    // presentation.
    let appendsPage = plan.appendsPage
    let initialPhase = plan.initialPhase
    let calmOptions = plan.options.flatMap { $0.presentsCalmly ? $0 : nil }
    let calmPlan = calmOptions == nil ? nil : copy plan
    let startState = writingStartState && calmOptions == nil ? plan.startState : nil
    let task = Self.makeTask(plan, id: id, host: host, priority: priority)
    tracker.begin(id, task: task)
    tracker.reservation = reservation
    if appendsPage { tracker.isLoadingMore = true }
    clearLoadActivity()
    if let phase = initialPhase { enter(phase) }
    if let calmOptions, let calmPlan {
      presentStart(
        calmPlan, calmOptions, id: id, writing: writingStartState, inherited: superseded,
        current: currentState ?? self.currentState)
    } else if let startState, !(currentState ?? self.currentState).isAlready(startState) {
      store(startState)
    }
    publishActivity()
    return task
  }

  /// Starts a load that runs in its caller's task, and returns its id: an `async` cached call whose load only waits
  /// for its entry's fetch runs that wait itself (no task to start and to resume). Like `launch` it supersedes the
  /// current load and writes the start state; the caller ends it with `finish` once its wait is over. `options`: the
  /// call's plain options (no calm presentation; `nil`: none), timed for a later `.leading` debounce like any call's.
  /// `paused`: the fetch it waits for waits for the network (its activity starts as `.paused`).
  @inlinable
  func launchInCaller(
    _ startState: State, writingStartState: Bool, options: LoadOptions?, paused: Bool = false
  ) -> UInt64 {
    noteLoadCall(on: options.flatMap { resolveOptions($0, interrupted: false) })
    stateWillChange()
    tracker.clear()?.cancel()
    let id = LoadTracker.nextID()
    tracker.begin(id, task: nil)
    clearLoadActivity()
    if paused { enter(.paused) }
    if writingStartState, !currentState.isAlready(startState) { store(startState) }
    publishActivity()
    return id
  }

  /// A call whose options change how it starts (``LoadStart``): `.joinRunning` while a load is in progress starts
  /// nothing and returns a task that ends with that load; a debounce that applies supersedes the current load at once
  /// but writes nothing until its delay is over (see ``LoadPhases``).
  @usableFromInline
  func startShaped(
    _ plan: LoadPlan<State>, _ resolved: LoadOptions.Resolved, silently: Bool, priority: TaskPriority?,
    currentState: State?
  ) -> Task<Void, Never> {
    switch LoadStart.decide(resolved.options, joinable: tracker.isJoinable, lastLoadCall: &lastLoadCall) {
    case .join:
      let ended = tracker.join()
      return Task(priority: priority) { await LoadJoin.wait(until: ended) }
    case .now:
      return launch(plan, writingStartState: !silently, priority: priority, currentState: currentState)
    case .debounced(let delay):
      var plan = plan
      plan.debounce(by: delay, from: lastLoadCall, silently: silently)
      return launch(plan, writingStartState: false, priority: priority, currentState: currentState)
    }
  }

  /// Starts a load for an `async` caller, which then waits with ``AwaitedLoad/wait()`` without holding the host.
  ///
  /// The caller's own task cancelled by this start (a nested load supersedes its caller) is not forwarded to the new
  /// load, which must win.
  @inlinable
  func startAwaited(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions? = nil, currentState: State? = nil,
    refreshing: Bool = false
  ) -> AwaitedLoad {
    let callerWasCancelled = Task.isCancelled
    let task = start(
      plan, silently: silently, options: options, priority: nil, currentState: currentState, refreshing: refreshing)
    return AwaitedLoad(task: task, forwardsCancellation: callerWasCancelled || !Task.isCancelled)
  }

  /// Cancels the current load, if any. The state stays as it is, unless the load's options restore the state its
  /// start state replaced and `restoring` (a cancellation, not the first step of a reset or a manual write).
  @inlinable @inline(__always)
  func cancelLoad(restoring: Bool = true) {
    stateWillChange()
    guard tracker.isRunning else { return }
    let task = tracker.task
    if restoring { endCancelled() } else { endLoad() }
    task?.cancel()
  }

  /// Forgets the current load (its task runs on, but may no longer write).
  @inlinable
  func endLoad() {
    endLoadBeforeWrite()
    publishActivity()
  }

  /// Forgets the current load, leaving its activity's delivery to the caller, which publishes it after the load's
  /// final write: observers see the state's last change before the activity goes idle.
  @inlinable
  func endLoadBeforeWrite() {
    _ = tracker.clear()
    loadDidEnd()
    clearLoadActivity()
  }

  /// Cancels the current load and writes the reset state (`.absent`, `.idle`) unless the state already is that.
  @inlinable
  func resetState() {
    keepError(nil)
    cancelLoad(restoring: false)
    if !currentState.isResetState {
      store(State.resetState)
    }
    publishActivity()
  }

  /// A manual write: cancels the current load, then stores and notifies. Always inlined, like `store`, so that the
  /// host's accesses are checked at compile time.
  @inlinable @inline(__always)
  func overwrite(_ state: State) {
    cancelLoad(restoring: false)
    store(state)
  }

  /// Whether the load `id` may still write (``LoadTracker/mayWrite(_:)``).
  @inlinable
  func mayWrite(_ id: UInt64) -> Bool { tracker.mayWrite(id) }

  /// Ends load `id` with `outcome`, if it may still write; otherwise only drops its bookkeeping if it is current.
  ///
  /// `keepingContent`: a refresh, whose ordinary failure is kept in the activity instead of being written. A load
  /// that ends without an error clears the error kept beside the state.
  @inlinable
  func finish(_ id: UInt64, with outcome: LoadOutcome<State>, keepingContent: Bool = false) {
    switch tracker.ending(id) {
    case .superseded: return
    case .cancelled: endCancelled()
    case .writesOutcome: complete(with: outcome, keepingContent: keepingContent)
    }
  }

  /// Ends the current load with `outcome` (the caller checked that the load may still write): a load's own end, or
  /// a cache entry's fetch ending the load of a state that waits for it (see `CacheBinding`).
  @inlinable
  func complete(with outcome: LoadOutcome<State>, keepingContent: Bool = false) {
    switch outcome {
    case .write(let state):
      let writes = LoadOutcome.writes(state, keepingContent: keepingContent) { keepError($0) }
      endLoadBeforeWrite()
      if writes { store(state) }
      publishActivity()
    case .done:
      keepError(nil)
      endLoad()
      loadEndedWithoutOutcome()
    case .cancel:
      cancelLoad()
      loadEndedWithoutOutcome()
    case .reset:
      loadAskedForReset()
    }
  }

  // MARK: Running

  /// Makes a load's task, bound to the load's context (for progress reports from its block, `LoadProgress.report`).
  ///
  /// The context is bound around the task's creation, which copies it into the task, rather than inside the task with
  /// `withValue`'s `async` form: that form takes its isolation as an `(any Actor)?`, another value than the one each
  /// `@MainActor` function hops to, and the optimizer keeps every hop between them (a `swift_task_switch` each, which
  /// costs its thread-local and executor lookups even on the actor the task runs on: twelve per load cycle, against the
  /// hand-written task's three). A cache binding's wait reports no progress: it needs no context.
  @inlinable @inline(__always)
  static func makeTask(
    _ plan: LoadPlan<State>, id: UInt64, host: HostReference<Self>, priority: TaskPriority?
  ) -> Task<Void, Never> {
    if case .waiting = plan.work { return spawn(plan, id: id, host: host, priority: priority) }
    return LoadContext.binding.withValue(LoadContext(id: id, sink: host)) {
      spawn(plan, id: id, host: host, priority: priority)
    }
  }

  /// The task itself: one closure, so that the body (``execute(_:id:host:)``, inlined into it) is compiled once.
  @inlinable
  static func spawn(
    _ plan: LoadPlan<State>, id: UInt64, host: HostReference<Self>, priority: TaskPriority?
  ) -> Task<Void, Never> {
    Task(priority: priority) { await execute(plan, id: id, host: host) }
  }

  /// The body of a load's task, its context bound (``makeTask(_:id:host:priority:)``). Always inlined, like `runBody`:
  /// each async function a task enters on the main actor costs it an executor check, so a load's task enters as few
  /// as the hand-written boilerplate does.
  @inlinable @inline(__always)
  static func execute(_ plan: LoadPlan<State>, id: UInt64, host: HostReference<Self>) async {
    let outcome: LoadOutcome<State>
    if plan.shape == nil {
      var thrown: (any Error)?
      outcome = await runBody(plan, id: id, host: host, thrown: &thrown)
    } else {
      outcome = await PhaseDriver.run(plan, id: id, host: host, isolation: MainActor.shared)
    }
    host.object?.finish(id, with: outcome, keepingContent: plan.keepsContent)
  }

  /// Runs the block once. `thrown` receives the error it threw, if any (the phases decide whether to retry it).
  @inlinable @inline(__always)
  static func runBody(
    _ plan: LoadPlan<State>, id: UInt64, host: HostReference<Self>, thrown: inout (any Error)?
  ) async -> LoadOutcome<State> {
    do {
      switch plan.work {
      case .returning(let block):
        return .loaded(try await block())
      case .finishing(let block):
        try await block()
        return .finished(startedAs: plan.startState)
      case .yielding(let block):
        // The `mayWrite` check of every `yield`, with the task's cancellation read from a flag (see
        // ``CancellationFlag``) rather than from the task's status.
        let cancelled = CancellationFlag()
        try await withTaskCancellationHandler {
          try await block { state in
            guard !cancelled.isRaised else { return }
            host.storeIfCurrent(state, id: id)
          }
        } onCancel: {
          cancelled.raise()
        }
        return .done
      case .waiting(let signal, let held):
        await LoadJoin.wait(until: signal)
        // An outcome held for the minimum loading time: the load runs until it is written — or until it is cancelled,
        // which drops it (a cancellation during the hold is a cancellation; the load then ends as cancelled).
        if let hold = held?.task {
          await withTaskCancellationHandler {
            await hold.value
          } onCancel: {
            hold.cancel()
          }
        }
        return .done
      }
    } catch {
      thrown = error
      return LoadOutcome(error: error, failure: plan.failure)
    }
  }
}

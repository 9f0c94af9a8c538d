/// The one engine behind every load and process, wrapper and key path alike.
///
/// A load moves through these steps (see `Documentation/Architecture.md`):
/// 1. `start` cancels the host's current load, takes a fresh id, creates the task, records both in the tracker
///    and then writes the start state (unless `silently`, or the state already is exactly that).
/// 2. The task runs the block. Each `yield` and the final outcome are written only while the load is still
///    current — its id is the tracker's and its task is not cancelled — so a superseded, cancelled or reset load
///    never writes again, even when its block ignores cancellation.
/// 3. The outcome ends the load: the tracker is cleared *before* the final write, so an observer that starts a new
///    load from that write is not disturbed.
///
/// The task never keeps its host alive (it holds the host's `HostReference`): when nothing else owns the host (a
/// wrapper's storage was released), the load cannot write and the host's `deinit` cancels it.
extension StateHost {
  /// Starts a load described by `plan` and returns its task.
  ///
  /// `currentState` is the state as the caller just read it, when it can read it more cheaply than the host can
  /// (the key-path faces read their key path where the compiler sees the caller's literal); `nil`: the host reads it.
  ///
  /// `refreshing`: a refresh — from a state that holds a value (`.loaded`), the load writes no start state and keeps
  /// the value on an ordinary failure (see `finish`); from any other state it is an ordinary load.
  @inlinable @discardableResult
  func start(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions? = nil, priority: TaskPriority?,
    currentState: State? = nil, refreshing: Bool = false
  ) -> Task<Void, Never> {
    var plan = plan
    var silently = silently
    if refreshing, (currentState ?? self.currentState).holdsValue {
      plan.keepsContent = true
      silently = true
    }
    // Options that change nothing for this load (`.default`, or a clock for waits it does not make) leave it on the
    // plain path: no settings box, no phases.
    if let options {
      if !options.isPlain || !plan.interrupts.isEmpty { plan.settings = LoadSettings(options) }
    } else if let declared = declaredSettings, !declared.isPlain || !plan.interrupts.isEmpty {
      plan.settings = declared
    }
    if let settings = plan.settings, settings.shapesTheStart {
      return startShaped(plan, settings.options, silently: silently, priority: priority, currentState: currentState)
    }
    noteLoadCall(options: options)
    return launch(plan, writingStartState: !silently, priority: priority, currentState: currentState)
  }

  /// A load call that is not debounced: a `.leading` debounce starts at once only when the state had no load call
  /// within its duration. Once a state has had a debounced call, every later call is timed too (on its options'
  /// clock, else the declared one, else the continuous clock); the calls before it are not, so that a state that
  /// never debounces pays nothing for it.
  @inlinable
  func noteLoadCall(options: LoadOptions?) {
    if lastLoadCall != nil { recordLoadCall(options: options) }
  }

  @usableFromInline
  func recordLoadCall(options: LoadOptions?) {
    lastLoadCall = LoadCallMark(options?.clock ?? declaredSettings?.options.clock ?? ContinuousClock())
  }

  /// Supersedes the current load and starts `plan` as the new current load: a fresh id, its task, then the start
  /// state (when `writingStartState`, unless the state already is exactly that).
  @inlinable @inline(__always)
  func launch(
    _ plan: LoadPlan<State>, writingStartState: Bool, priority: TaskPriority?, currentState: State?
  ) -> Task<Void, Never> {
    tracker.clear()?.cancel()
    var plan = plan
    // A limited load queues when it is called (a debounced one once its debounce is over).
    var reservation: (limiter: LoadLimiter, ticket: PermitTicket)?
    if plan.debounce == nil, let limiter = plan.settings?.options.limiter {
      let ticket = limiter.reserve()
      plan.ticket = ticket
      reservation = (limiter, ticket)
    }
    let id = LoadTracker.nextID()
    let host = hostReference
    // Captured as a constant: a captured `var` would be boxed on the heap.
    let launched = plan
    let task = Task(priority: priority) {
      await Self.execute(launched, id: id, host: host)
    }
    tracker.begin(id, task: task)
    tracker.reservation = reservation
    clearLoadActivity()
    if let phase = plan.initialPhase { enter(phase) }
    if writingStartState, !(currentState ?? self.currentState).isAlready(plan.startState) {
      store(plan.startState)
    }
    publishActivity()
    return task
  }

  /// A call whose options change how it starts:
  /// - `.joinRunning` while a load is in progress (in any phase): the call starts nothing, writes nothing, never runs
  ///   its block, and returns a task that ends when the load in progress ends (or when it is cancelled itself).
  /// - a debounce that applies: the new load supersedes the current one at once but writes nothing yet; it waits the
  ///   delay on the options' clock first (see ``LoadPhases``), and a newer call during the wait replaces it.
  @usableFromInline
  func startShaped(
    _ plan: LoadPlan<State>, _ options: LoadOptions, silently: Bool, priority: TaskPriority?, currentState: State?
  ) -> Task<Void, Never> {
    // A load whose task was cancelled (through the `Task` its call returned, or its `async` caller) can no longer
    // write: there is nothing to join, and the call starts a load that supersedes it.
    if options.overlap == .joinRunning, tracker.isRunning, tracker.task?.isCancelled != true {
      let ended = FirstSignal<Bool>()
      tracker.joiners.append(ended)
      return Task(priority: priority) { await LoadJoin.wait(until: ended) }
    }
    guard let debounce = options.debounce else {
      noteLoadCall(options: options)
      return launch(plan, writingStartState: !silently, priority: priority, currentState: currentState)
    }
    guard let delay = debounceDelay(debounce, on: options.clock) else {
      return launch(plan, writingStartState: !silently, priority: priority, currentState: currentState)
    }
    var plan = plan
    plan.debounce = delay
    plan.debounceOrigin = lastLoadCall
    plan.silently = silently
    return launch(plan, writingStartState: false, priority: priority, currentState: currentState)
  }

  /// How long a call with `debounce` waits before its load starts; `nil`: it starts at once. Records the call, so
  /// that a `.leading` debounce knows whether the state had a (debounced) load call within its duration.
  ///
  /// A zero or negative duration never waits. A `.leading` call whose previous call was timed on a clock of another
  /// type counts as the first.
  @usableFromInline
  func debounceDelay(_ debounce: Debounce, on clock: any Clock<Duration>) -> Duration? {
    let previous = lastLoadCall
    lastLoadCall = LoadCallMark(clock)
    switch debounce {
    case .trailing(let delay):
      return delay > .zero ? delay : nil
    case .leading(let delay):
      guard delay > .zero, let elapsed = previous?.elapsed(on: clock), elapsed < delay else { return nil }
      return delay
    }
  }

  /// Starts a load for an `async` caller, which then waits with ``AwaitedLoad/wait()`` — without holding the host,
  /// so that an `async` caller keeps the state alive no more than a Task caller does.
  ///
  /// A load started inside the block of a load of the same state cancels its caller's own task (it supersedes the
  /// load running that block). That cancellation is the engine's, not the caller's wish, so it is not passed on to
  /// the new load, which is the newest and must win.
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

  /// Cancels the current load, if any; the state stays as it is.
  @inlinable @inline(__always)
  func cancelLoad() {
    guard tracker.isRunning else { return }
    let task = tracker.task
    endLoad()
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
    cancelLoad()
    if !currentState.isResetState {
      store(State.resetState)
    }
    publishActivity()
  }

  /// A manual write: cancels the current load, then stores and notifies. Always inlined, like `store`, so that the
  /// host's accesses are checked at compile time.
  @inlinable @inline(__always)
  func overwrite(_ state: State) {
    cancelLoad()
    store(state)
  }

  /// Whether the load `id` may still write: it is current and the task running this code is not cancelled.
  @inlinable
  func mayWrite(_ id: UInt64) -> Bool {
    tracker.isCurrent(id) && !Task.isCancelled
  }

  /// Ends load `id` with `outcome`, if it may still write; otherwise only drops its bookkeeping if it is current.
  ///
  /// `keepingContent`: a refresh, whose ordinary failure is kept in the activity instead of being written. A load
  /// that ends without an error clears the error kept beside the state.
  @inlinable
  func finish(_ id: UInt64, with outcome: LoadOutcome<State>, keepingContent: Bool = false) {
    guard tracker.isCurrent(id) else { return }
    guard !Task.isCancelled else {
      // Cancelled through its task (or its caller's): it ends without writing.
      endLoad()
      return
    }
    switch outcome {
    case .write(let state):
      // The error kept beside the state: a failed refresh's; a success clears it; an ordinary failure (which the
      // state shows) leaves it as it was.
      let error = state.failureError
      if keepingContent, let error {
        keepError(error)
      } else if error == nil {
        keepError(nil)
      }
      endLoadBeforeWrite()
      if !keepingContent || error == nil { store(state) }
      publishActivity()
    case .done:
      keepError(nil)
      endLoad()
    case .cancel:
      cancelLoad()
    case .reset:
      resetState()
    }
  }

  // MARK: Running

  /// The body of a load's task. Always inlined, like `runBody`: each async function a task enters on the main actor
  /// costs it an executor check, so a load's task enters as few as the hand-written boilerplate does.
  @inlinable @inline(__always)
  static func execute(_ plan: LoadPlan<State>, id: UInt64, host: HostReference<Self>) async {
    // The load's context, for progress reports from its block (`LoadProgress.report`).
    await LoadContext.binding.withValue(LoadContext(id: id, sink: host)) {
      let outcome: LoadOutcome<State>
      if plan.interrupts.isEmpty, plan.settings == nil {
        var thrown: (any Error)?
        outcome = await runBody(plan, id: id, host: host, thrown: &thrown)
      } else {
        outcome = await runPhases(plan, id: id, host: host)
      }
      host.object?.finish(id, with: outcome, keepingContent: plan.keepsContent)
    }
  }

  /// Runs the block once. `thrown` receives the error it threw, if any (the phases decide whether to retry it).
  @inlinable @inline(__always)
  static func runBody(
    _ plan: LoadPlan<State>, id: UInt64, host: HostReference<Self>, thrown: inout (any Error)?
  ) async -> LoadOutcome<State> {
    do {
      switch plan.work {
      case .returning(let block):
        return .write(State.loaded(try await block()))
      case .finishing(let block):
        try await block()
        return State.finished(startedAs: plan.startState).map(LoadOutcome.write) ?? .done
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
      }
    } catch {
      thrown = error
      return LoadOutcome(error: error, failure: plan.failure)
    }
  }
}
/// A load an `async` caller waits for. It holds the load's task only, never its host.
@usableFromInline
struct AwaitedLoad: Sendable {
  @usableFromInline let task: Task<Void, Never>
  /// Whether cancelling the caller cancels the load (see `StateHost.startAwaited`).
  @usableFromInline let forwardsCancellation: Bool

  @inlinable
  init(task: Task<Void, Never>, forwardsCancellation: Bool) {
    self.task = task
    self.forwardsCancellation = forwardsCancellation
  }

  /// Returns when the load ends. Cancelling the calling task cancels the load.
  ///
  /// Main-actor isolated like its callers: a nonisolated `async` function would hop off the main actor to wait and
  /// back again after, two executor switches per `async` load.
  @inlinable @MainActor
  func wait() async {
    guard forwardsCancellation else {
      await task.value
      return
    }
    let task = self.task
    await withTaskCancellationHandler {
      await task.value
    } onCancel: {
      task.cancel()
    }
  }
}

/// The reference to a host that its loads' tasks hold: it never keeps the host alive, and reads `nil` once the
/// host is gone.
///
/// A host makes one and shares it with all its loads (see `StateHost.hostReference`), so each load's task retains
/// this box instead of forming, copying and destroying a reference of its own. Two kinds:
/// - *weak* (a wrapper's storage, which may be released on any thread): a Swift weak reference.
/// - *main-actor* (a key-path host, which only main-actor code ever holds, so it is always released there): an
///   unretained reference that the host's `deinit` clears. It spares the host the side table a weak reference
///   needs, where every retain and release takes a slow path, and lets a `yield` reach the host without retaining
///   it (see ``storeIfCurrent(_:id:)``).
@usableFromInline
final class HostReference<Host: AnyObject & Sendable>: @unchecked Sendable {
  // `@unchecked`: `weakObject` is only assigned in `init` (reading a weak reference is thread-safe);
  // `mainActorObject` is read and cleared on the main actor only. Each access is a single load or store that never
  // overlaps another, so their dynamic exclusivity checks (read on every `yield` and outcome) are skipped.
  @usableFromInline @exclusivity(unchecked) weak var weakObject: Host?
  @usableFromInline @exclusivity(unchecked) var mainActorObject: Unmanaged<Host>?
  @usableFromInline let isWeak: Bool

  @usableFromInline
  init(_ object: Host, releasedOnMainActorOnly: Bool) {
    isWeak = !releasedOnMainActorOnly
    if isWeak { weakObject = object } else { mainActorObject = .passUnretained(object) }
  }

  /// The host, while it exists.
  @inlinable @MainActor
  var object: Host? { isWeak ? weakObject : mainActorObject?.takeUnretainedValue() }

  /// Writes `state`, yielded by the load `id`, if that load is still the host's current one.
  ///
  /// A main-actor host is reached without a retain: it is called through ``StateHost/storeUnretained(_:)``, which
  /// keeps it alive until the write returns even when the write ends its load (an observer may cancel it).
  @inlinable @MainActor
  func storeIfCurrent(_ state: Host.State, id: UInt64) where Host: StateHost {
    if isWeak {
      guard let host = weakObject, host.tracker.isCurrent(id) else { return }
      host.store(state)
    } else {
      guard let host = mainActorObject else { return }
      host.withGuaranteedInstance { host in
        guard host.tracker.isCurrent(id) else { return }
        host.storeUnretained(state)
      }
    }
  }

  /// Called by the `deinit` of a host released on the main actor only.
  func hostDidEnd() {
    MainActor.preconditionIsolated("Processed: a key-path host was released off the main actor")
    mainActorObject = nil
  }
}

/// Sleeping for delays of any size (interrupts, timeouts, retry delays, debounces) on any clock.
///
/// Every wait sleeps *until a deadline* measured from a fixed origin — the moment the wait began, or the moment of
/// the call it belongs to — never for a duration counted from whenever the previous step woke up. So a manual clock
/// advanced past several deadlines at once wakes them all, and time spent between steps (an interrupt's handler, a
/// hop to the main actor) does not push later deadlines back.
///
/// A clock traps on very large deadlines (the instant overflows), so delays are capped at ``longest`` (about 292
/// billion years) and slept in steps of a day, each until its own deadline from the origin; accumulated delays
/// saturate there too.
@usableFromInline
enum InterruptClock {
  /// The longest delay honoured; larger ones are treated as this (in practice: never).
  @usableFromInline static let longest = Duration.seconds(Int64.max)
  private static let step = Duration.seconds(86_400)

  /// Sleeps until `delay` after `origin` on `clock`; from now when `origin` is `nil` or an instant of another
  /// clock type.
  @usableFromInline
  static func sleep(
    for delay: Duration, after origin: (any InstantProtocol<Duration>)? = nil, on clock: any Clock<Duration>,
    isolation: isolated (any Actor)? = #isolation
  ) async throws {
    try await sleep(for: delay, after: origin, onClock: clock)
  }

  private static func sleep<C: Clock<Duration>>(
    for delay: Duration, after origin: (any InstantProtocol<Duration>)?, onClock clock: C,
    isolation: isolated (any Actor)? = #isolation
  ) async throws {
    try await sleep(until: min(delay, longest), since: (origin as? C.Instant) ?? clock.now, on: clock)
  }

  /// Sleeps until `offset` after `origin`, in steps of a day from `reached` (an offset already slept until).
  ///
  /// Runs on the caller's actor (`isolation`): a nonisolated function would hop off the main actor and back, and the
  /// way back queues the caller behind everything the main actor has queued meanwhile, even when nothing is slept.
  static func sleep<C: Clock<Duration>>(
    until offset: Duration, since origin: C.Instant, from reached: Duration = .zero, on clock: C,
    isolation: isolated (any Actor)? = #isolation
  ) async throws {
    var reached = reached
    while reached < offset {
      reached = offset - reached > step ? reached + step : offset
      let deadline = origin.advanced(by: reached)
      // A deadline already passed is not slept for: that would still suspend and queue the waiter behind whatever
      // the executor has queued since (on a busy main actor, a 50 ms interrupt could then come after a 10 s load).
      if clock.now >= deadline {
        try Task.checkCancellation()
        continue
      }
      try await clock.sleep(until: deadline, tolerance: nil)
    }
  }

  /// `total + delay`, saturating at ``longest``.
  static func adding(_ delay: Duration, to total: Duration) -> Duration {
    longest - total < delay ? longest : total + delay
  }
}

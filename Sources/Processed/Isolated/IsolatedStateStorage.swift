public import CProcessedAtomics

/// The storage of an ``IsolatedLoadable`` or ``IsolatedProcess``: the state, its current load, its observers, and the
/// actor that owns it.
///
/// Not `Sendable`: it lives in its owner's region, and every access runs on that actor — the owner's own code, and the
/// tasks of its loads, which are isolated to the same actor (they capture its `isolation` parameter). The first call
/// that takes `isolation:` pins the storage to that actor instance; every later call checks it (``claim(_:)``).
///
/// A running load's task holds the storage and the actor strongly; the storage holds the actor `unowned` (no side
/// table, so the actor's reference counting stays on its fast path, and its memory — its identity — is kept while the
/// storage lives). See Documentation/IsolatedLoads.md.
///
/// `@unchecked Sendable`, and its fields `@exclusivity(unchecked)`, under one invariant: every member is touched only on
/// the owning actor, in short accesses that never span a call to user code (Unsafe/README.md, invariant 1). The one
/// entry from elsewhere is ``reportProgress(_:from:isolation:)`` (it is its loads' progress sink, so a load makes no
/// sink of its own), which checks that its caller is the owner before it touches anything (a cancelled `async` caller
/// stops its load through a job isolated to the owner); `deinit` touches only the thread-safe slots and signals. Being `Sendable` does not let a state leave its actor: the wrappers and controllers
/// that hold it are not `Sendable`.
@usableFromInline
final class IsolatedStateStorage<State: ManagedState & Sendable>: @unchecked Sendable, ProgressSink {
  @usableFromInline @exclusivity(unchecked) var state: State
  /// The last state that held a value, while the state holds none (`lastValue`); the reset state when there is none
  /// (``ManagedState/keepLastValue(_:replacing:with:)``).
  @usableFromInline @exclusivity(unchecked) var keptState: State
  /// The declaration's options (`@IsolatedLoadable(options:)`); `nil`: `LoadOptions.default`.
  @usableFromInline let declaredOptions: LoadOptions.Resolved?
  /// What the wrapper is called in failure messages (`IsolatedLoadable<[Post]>`).
  @usableFromInline let kind: String

  // MARK: The owner

  /// The actor the state is pinned to; `nil` until the first call that takes `isolation:`.
  @usableFromInline @exclusivity(unchecked) var ownerID: ObjectIdentifier?
  @usableFromInline unowned var owner: (any Actor)?
  @usableFromInline var ownerName = ""

  // MARK: The current load

  /// The current load's bookkeeping (its id, task, `.joinRunning` joiners and limiter reservation), as a main-actor
  /// state keeps it; its ids come from ``lastID``.
  @usableFromInline @exclusivity(unchecked) var tracker = LoadTracker()
  /// The last id given to a load. Ids grow per storage and are never reused, so a stale load can tell.
  @usableFromInline @exclusivity(unchecked) var lastID: UInt64 = 0
  /// The `async` caller waiting for the current load, resumed when it stops (on the owner, once).
  @usableFromInline @exclusivity(unchecked) var awaitedBy: UnsafeContinuation<Void, Never>?
  /// When the last debounced call was made (what a `.leading` debounce compares with).
  @usableFromInline @exclusivity(unchecked) var lastLoadCall: LoadCallMark?

  // MARK: Activity

  /// The current load's phase; `nil`: derived (running attempt 1 while a load runs).
  @usableFromInline @exclusivity(unchecked) var phase: LoadActivity.Phase?
  @usableFromInline @exclusivity(unchecked) var progress: LoadProgress?
  /// The error kept beside the state (a retried attempt's, a failed refresh's).
  @usableFromInline @exclusivity(unchecked) var lastError: (any Error)?
  /// The activity last delivered to activity observers.
  @usableFromInline @exclusivity(unchecked) var publishedActivity = LoadActivity()

  // MARK: Observers

  /// The state's observers (made with the storage: a `let`, so a write reads it without retaining it) and the
  /// activity's (made on first use). The slots give tokens a thread-safe `cancel()`; delivery is this storage's own,
  /// on the owner (see ``deliver(_:to:)``).
  @usableFromInline let stateSlot = ObserverSlot.make()
  @usableFromInline @exclusivity(unchecked) var activitySlot: ObserverSlot?
  /// Whether changes are being delivered, and the deliveries of changes made meanwhile, which wait their turn.
  @usableFromInline @exclusivity(unchecked) var isDelivering = false
  @usableFromInline @exclusivity(unchecked) var pending: [() -> Void] = []

  // MARK: The mirror (cache, pages, calm presentation)

  /// The state's ``StateMirror`` (a `StateMirror<Value>` for a `LoadableState<Value>`), made on first use.
  @exclusivity(unchecked) var mirror: (any MirrorLink)?
  /// The epoch of the owner's last operation that changed what the state follows (see ``StateMirror``).
  @exclusivity(unchecked) var mirrorEpoch: UInt64 = 0
  /// Whether the state follows its mirror: changes stamped with ``mirrorEpoch`` are written.
  @usableFromInline @exclusivity(unchecked) var followsMirror = false
  /// The mirror's activity, while the state follows it.
  @usableFromInline @exclusivity(unchecked) var mirroredActivity: LoadActivity?
  /// The entry's version of the value the state shows as the cache's (`0`: none).
  @exclusivity(unchecked) var mirroredVersion: UInt64 = 0
  /// What a followed load's start replaced, when its options restore it on cancellation (`.restore`).
  @exclusivity(unchecked) var mirrorRestores: State?
  /// `.joinRunning` calls that joined the load the state follows, told when it ends (``endMirrorJoiners()``).
  @exclusivity(unchecked) var mirrorJoiners: [FirstSignal<Bool>] = []
  /// Whether the load the state follows was started by a `loadMore`, which a `.joinRunning` call does not join.
  @exclusivity(unchecked) var mirrorLoadsMore = false

  @inlinable
  init(_ state: State, options: LoadOptions?, kind: String) {
    self.state = state
    keptState = State.resetState
    declaredOptions = options.map(LoadOptions.Resolved.init)
    self.kind = kind
  }

  deinit {
    // No load runs (a running load's task holds the storage). Closing the slots ends `states` sequences.
    mirror?.close()
    _ = tracker.clear()  // tells `.joinRunning` joiners
    for joiner in mirrorJoiners { joiner.signal(true) }
    awaitedBy?.resume()  // never set here (a waiting caller holds the storage); resumed rather than leaked
    stateSlot.close()
    activitySlot?.close()
  }

  /// The last wrapper copy and controller went away (``IsolatedStateHandle``). No call reaches the storage from now on
  /// but its running load's, on the owner; the fields read here were written by calls made through a handle, before
  /// it went.
  ///
  /// While a load runs, its task holds the owner, so the owner lives: it cancels the load and ends the observers
  /// (`states`) at its next turn. Otherwise they end here — on the owner (the handles live in its region), or while
  /// the owner goes away (its stored wrapper is released by its `deinit`, on any thread), or for a state never pinned.
  /// The owner is not held weakly to tell these apart: a weak reference gives the actor a side table, and every
  /// retain and release of it, one per job its loads enqueue, would then take the runtime's slow path.
  func lastHandleWentAway() {
    // `owner` is read only while a load runs, when its task holds the actor (reading a gone `unowned` owner traps).
    guard tracker.isRunning, let owner else {
      mirror?.close()
      closeSlots()
      return
    }
    Task { await self.stopAfterRelease(isolation: owner) }
  }

  private func stopAfterRelease(isolation: isolated (any Actor)) {
    cancelLoad()
    mirror?.close()
    mirror = nil
    closeSlots()
  }

  private func closeSlots() {
    stateSlot.close()
    activitySlot?.close()
  }

  // MARK: Pinning

  /// Pins the storage to `isolation` on first use; afterwards stops with a message naming both actors when
  /// `isolation` is another actor instance (also one on the same executor).
  @inlinable @inline(__always)
  func claim(_ isolation: isolated (any Actor)) {
    let id = ObjectIdentifier(isolation)
    if ownerID == id { return }
    claimSlowly(isolation)
  }

  @usableFromInline
  func claimSlowly(_ isolation: isolated (any Actor)) {
    let id = ObjectIdentifier(isolation)
    guard let ownerID else {
      self.ownerID = id
      owner = isolation
      ownerName = Self.describe(isolation)
      return
    }
    preconditionFailure(
      "Processed: this \(kind) belongs to \(ownerName) and was used from \(Self.describe(isolation)); "
        + "an actor-owned state is used only by the actor that first used it (\(ownerID) ≠ \(id))")
  }

  /// Stops the program when the caller of a property (`wrappedValue`, `state`, `states`, `activity`, `lastValue`) does
  /// not run on the owner's executor. A property cannot know its caller's isolation, so the check is the runtime's
  /// (Swift 6.3 on Linux prints "Incorrect actor executor assumption; expected '<Owner>' executor" and not this
  /// message). Before the state is pinned anyone may read and write it. (Once its owner is gone, the `unowned`
  /// reference traps: the wrappers cannot leave their actor, so only code that kept a wrapper past it gets there.)
  @inlinable @inline(__always)
  func checkOwner() {
    guard ownerID != nil, let owner else { return }
    owner.preconditionIsolated(
      "Processed: this \(kind) belongs to \(ownerName) and was used from another isolation")
  }

  /// The state as a wrapper's `wrappedValue` reads and writes it: checked to be on the owner (``checkOwner()``); a
  /// write is a manual one (it cancels the current load).
  @inlinable
  var ownedState: State {
    get {
      checkOwner()
      return state
    }
    set {
      checkOwner()
      cancelLoad(restoring: false)
      store(newValue)
    }
  }

  static func describe(_ actor: any Actor) -> String {
    "\(type(of: actor)) (\(ObjectIdentifier(actor)))"
  }

  // MARK: Writing and observing

  /// Stores `new` and notifies the state's observers, keeping the last value up to date.
  @inlinable
  func store(_ new: State) {
    State.keepLastValue(&keptState, replacing: state, with: new)
    state = new
    deliver(new, to: stateSlot)
  }

  /// Delivers `value` to the observers `slot` has now: at once, or after the delivery in progress (a change made by
  /// an observer waits until every observer has seen the change before it).
  @inlinable
  func deliver<Value>(_ value: Value, to slot: ObserverSlot) {
    guard processed_slot_has_observers(slot.sync) else { return }
    let (calls, epoch) = slot.registeredCalls()
    if isDelivering {
      pending.append { Self.call(calls, epoch: epoch, of: slot, with: value) }
      return
    }
    isDelivering = true
    Self.call(calls, epoch: epoch, of: slot, with: value)
    while !pending.isEmpty { pending.removeFirst()() }
    isDelivering = false
  }

  /// Calls each observer in `calls` that is still registered.
  @inlinable
  static func call<Value>(_ calls: SnapshotCalls, epoch: UInt32, of slot: ObserverSlot, with value: Value) {
    switch calls {
    case .none:
      break
    case .one(let call):
      if slot.removals == epoch || slot.isRegistered(call.id) {
        unsafeDowncast(call, to: IsolatedObserverCall<Value>.self).handler(value)
      }
    case .several(let list):
      for call in list where slot.removals == epoch || slot.isRegistered(call.id) {
        unsafeDowncast(call, to: IsolatedObserverCall<Value>.self).handler(value)
      }
    }
  }

  /// Registers an observer of the state.
  func observe(onRegistryEnd: (@Sendable () -> Void)? = nil, _ onChange: @escaping (State) -> Void)
    -> ObservationToken
  {
    return stateSlot.register(IsolatedObserverCall(onChange, onRegistryEnd: onRegistryEnd))
  }

  /// The current state, then every later change, in order, never dropped or coalesced; ends when the storage goes
  /// away.
  func states() -> AsyncStream<State> {
    AsyncStream.states(startingWith: state) { observe(onRegistryEnd: $0, $1) }
  }

  // MARK: Activity

  /// The activity of the state now.
  @inlinable
  var activity: LoadActivity {
    if followsMirror, let mirroredActivity { return mirroredActivity }
    let isRunning = tracker.isRunning
    return LoadActivity(
      phase: isRunning ? (phase ?? .running(attempt: 1)) : .idle, progress: isRunning ? progress : nil,
      lastError: lastError)
  }

  /// Delivers the activity to its observers if it changed since the last delivery.
  @inlinable
  func publishActivity() {
    guard let activitySlot else { return }
    let now = activity
    guard now != publishedActivity else { return }
    publishedActivity = now
    deliver(now, to: activitySlot)
  }

  /// Registers an observer of the activity.
  func observeActivity(_ onChange: @escaping (LoadActivity) -> Void) -> ObservationToken {
    let slot = activitySlot ?? ObserverSlot.make()
    if activitySlot == nil {
      activitySlot = slot
      publishedActivity = activity
    }
    return slot.register(IsolatedObserverCall(onChange, onRegistryEnd: nil))
  }

  /// The current load entered `phase`.
  @inlinable
  func enter(_ phase: LoadActivity.Phase) {
    self.phase = phase
    publishActivity()
  }

  /// Keeps `error` beside the state (`nil` clears it).
  @inlinable
  func keepError(_ error: (any Error)?) {
    lastError = error
  }

  /// A report from a load's block (``LoadProgress/report(fraction:message:isolation:)``, through the load's task-local
  /// context), which any code of the load's task may make, on any actor: kept only when it runs on the owner.
  @usableFromInline
  func reportProgress(_ progress: LoadProgress, from id: UInt64, isolation: isolated (any Actor)?) {
    guard let isolation, let ownerID, ObjectIdentifier(isolation) == ownerID else { return }
    reportProgress(progress, from: id)
  }

  /// A progress report of load `id`: kept when that load is current.
  func reportProgress(_ progress: LoadProgress, from id: UInt64) {
    guard tracker.isCurrent(id) else { return }
    self.progress = progress
    publishActivity()
  }
}

/// An observer of an actor-owned state: its handler is not `Sendable` and is only called on the owning actor.
@usableFromInline
final class IsolatedObserverCall<Value>: ObserverCall {
  @usableFromInline let handler: (Value) -> Void
  let onRegistryEnd: (@Sendable () -> Void)?

  init(_ handler: @escaping (Value) -> Void, onRegistryEnd: (@Sendable () -> Void)?) {
    self.handler = handler
    self.onRegistryEnd = onRegistryEnd
    super.init()
  }

  override func registryDidEnd() { onRegistryEnd?() }
}

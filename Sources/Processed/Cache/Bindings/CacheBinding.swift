/// A state bound to a cache entry: the entry writes it through the state's own write path (observers, `states`, the
/// Observation bridge), and ends the load of the state that waits for the entry's fetch.
///
/// A binding holds its state's owner weakly; once the owner is gone, the entry drops the binding the next time it
/// writes. Subclasses say how to reach the state: ``StorageCacheBinding`` (a wrapper's storage) and
/// ``KeyPathCacheBinding`` (a key path of a class).
@usableFromInline @MainActor
class CacheBinding<Value: Sendable>: AnyCacheBinding {
  @usableFromInline typealias State = LoadableState<Value>

  /// The entry the state is bound to; `nil` once unbound. Strong, so that reading it costs no weak reference: the
  /// entry holds its bindings too, and the cycle ends when the state leaves (`CacheEntry.remove` clears it).
  @usableFromInline @exclusivity(unchecked) var entry: CacheEntry<Value>?
  /// The state's load that waits for the entry's fetch (its id on the state's tracker), and what ends its block.
  // Main actor, short accesses: `@exclusivity(unchecked)` (Unsafe/README.md, invariant 1).
  @usableFromInline @exclusivity(unchecked) var waitingLoad: UInt64 = 0
  @usableFromInline @exclusivity(unchecked) var waitSignal: FirstSignal<Bool>?
  /// The entry's outcome held back until the state's start state has been on screen its minimum loading time, shared
  /// with the waiting load's block (which waits for it).
  @usableFromInline @exclusivity(unchecked) var heldOutcome: HeldOutcome?
  @usableFromInline var hold: Task<Void, Never>? {
    get { heldOutcome?.task }
    set { heldOutcome?.task = newValue }
  }

  /// The options of the state's declaration (a wrapper's), for a call given none.
  @usableFromInline var declaredOptions: LoadOptions.Resolved? { nil }

  /// The entry's ``CacheEntry/version`` the state was last written with by the entry while bound to it; `0`: none
  /// (reset when the state leaves). While it is the entry's version, the state shows the entry's value.
  @usableFromInline @exclusivity(unchecked) var shownVersion: UInt64 = 0
  /// The polling the state's binding call asked for (`LoadOptions.refetchInterval`, `refetchInBackground`).
  @usableFromInline @exclusivity(unchecked) var refetchInterval: Duration?
  @usableFromInline @exclusivity(unchecked) var refetchInBackground = false

  /// The state's host: the running one, or one made for a write; `nil` once the owner is gone.
  @usableFromInline func host() -> (any StateHost<State>)? { fatalError("abstract") }

  /// Writes `value` (the entry's, at `version`) at once as the cache (a hit): ends the state's own load, clears its
  /// kept error, writes `.loaded(value)` through its write path — unless the state shows it already (no duplicate
  /// notification). Written per host type, so the hot path calls no existential.
  @usableFromInline func showAtOnce(_ value: Value, version: UInt64) { fatalError("abstract") }

  /// Starts a load of the state, as the cache (it keeps the state bound), with `options` — `nil`: a plain load, never
  /// the declaration's options (those are the fetch's) — and returns its task and its id on the state's tracker (`0`
  /// when the state's owner is gone). A wrapper's state is started through its typed storage, so that its load is
  /// specialized with the caller; any other through its binding's ``startHostLoad(_:silently:options:priority:)``.
  @inlinable
  final func startLoad(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions? = nil, priority: TaskPriority?
  ) -> (task: Task<Void, Never>, id: UInt64) {
    if let wrapper = self as? StorageCacheBinding<Value> {
      guard let storage = wrapper.storage else { return (KeyPathTargetEnded.task, 0) }
      let task = wrapper.startStorageLoad(plan, on: storage, silently: silently, options: options, priority: priority)
      return (task, storage.tracker.currentID)
    }
    let task = startHostLoad(plan, silently: silently, options: options, priority: priority)
    return (task, host()?.tracker.currentID ?? 0)
  }

  /// ``startLoad(_:silently:options:priority:)`` for an `async` caller.
  @inlinable
  final func startAwaitedLoad(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions? = nil
  ) -> (load: AwaitedLoad, id: UInt64) {
    if let wrapper = self as? StorageCacheBinding<Value> {
      let load = wrapper.startAwaitedStorageLoad(plan, silently: silently, options: options)
      return (load, wrapper.storage?.tracker.currentID ?? 0)
    }
    let load = startHostAwaitedLoad(plan, silently: silently, options: options)
    return (load, host()?.tracker.currentID ?? 0)
  }

  /// Starts the load of the state that waits for the entry's fetch (see ``waitingPlan(options:)``) and records it as
  /// the waiting one; `appendingPage`: it waits for a `loadMore`'s page.
  @inlinable @discardableResult
  final func startWaitingLoad(
    silently: Bool, options: LoadOptions? = nil, priority: TaskPriority?, appendingPage: Bool = false
  ) -> Task<Void, Never> {
    var plan = waitingPlan(options: options)
    plan.appendsPage = appendingPage
    let started = startLoad(plan, silently: silently, options: options, priority: priority)
    waitingLoad = started.id
    return started.task
  }

  /// ``startWaitingLoad(silently:options:priority:appendingPage:)`` for an `async` caller.
  @inlinable
  final func startAwaitedWaitingLoad(silently: Bool, options: LoadOptions?) -> AwaitedLoad {
    let started = startAwaitedLoad(waitingPlan(options: options), silently: silently, options: options)
    waitingLoad = started.id
    return started.load
  }

  /// ``startLoad(_:silently:options:priority:)`` on the state's host, as each kind of binding reaches it.
  @usableFromInline func startHostLoad(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never> {
    fatalError("abstract")
  }

  /// ``startAwaitedLoad(_:silently:options:)`` on the state's host, as each kind of binding reaches it.
  @usableFromInline func startHostAwaitedLoad(
    _ plan: LoadPlan<State>, silently: Bool, options: LoadOptions?
  ) -> AwaitedLoad { fatalError("abstract") }

  /// What a waiting load passes its host for `options` (`nil`: plain): the host reads `nil` as "the declaration's",
  /// so a host that declares options is given the plain ones explicitly.
  @inlinable
  static func waitingOptions(_ options: LoadOptions?, on host: some StateHost) -> LoadOptions? {
    options ?? (host.declaredOptions == nil ? nil : LoadOptions())
  }

  /// Whether the state's waiting load is still its current one.
  @usableFromInline final var isWaiting: Bool {
    guard waitingLoad != 0, let host = host() else { return false }
    return host.tracker.isCurrent(waitingLoad)
  }

  /// Makes a load of the state that waits until the entry's fetch ends; the entry writes its outcome. `options`: the
  /// waiting load's own (its calm presentation): an outcome is held back only for a minimum loading time.
  @inlinable
  final func waitingPlan(options: LoadOptions?) -> LoadPlan<State> {
    let signal = FirstSignal<Bool>()
    waitSignal = signal
    let held = options?.minimumLoadingTime == nil ? nil : HeldOutcome()
    heldOutcome = held
    var plan = LoadPlan<State>(startState: .loading, work: .waiting(signal, held))
    plan.startsPaused = entry?.isPaused == true
    return plan
  }

  /// Writes the entry's outcome: `state` (or, when `nil`, keeps what the state shows and records `error` as its
  /// activity's last error). A waiting load ends with the write, as if it had fetched the outcome itself. Returns
  /// `false`, having only released the wait, when the state's owner is gone.
  @discardableResult @inlinable
  final func deliver(_ state: State?, error: (any Error)? = nil, endingWait: Bool = true) -> Bool {
    // A wrapper's state is written through its typed storage: the write is specialized with the caller (the host as
    // an existential would be written through the engine's unspecialized code).
    if let wrapper = self as? StorageCacheBinding<Value> {
      guard let storage = wrapper.storage else {
        releaseWait()
        return false
      }
      deliver(state, error: error, endingWait: endingWait, to: storage)
      return true
    }
    guard let host = host() else {
      releaseWait()
      return false
    }
    deliver(state, error: error, endingWait: endingWait, to: host)
    return true
  }

  /// ``deliver(_:error:endingWait:)`` to the state's host, there.
  @inlinable
  final func deliver<Host: StateHost>(_ state: State?, error: (any Error)?, endingWait: Bool, to host: Host)
  where Host.State == State {
    guard endingWait else {
      if let state {
        host.store(state)
        if state.isLoaded { shownVersion = entry?.version ?? 0 }
      }
      return
    }
    // No unbinding hook on these paths (`complete`, `store`): observers that reset or load the state unbind it.
    if waitingLoad != 0, host.tracker.isCurrent(waitingLoad), let state, let record = host.tracker.screen,
      record.holdsResult, let shownAt = record.shownAt, let minimum = record.minimum
    {
      // The state's spinner has not been up for its minimum loading time: the outcome is written when it has, by
      // `hold`, which the waiting load's block waits for (the load runs on meanwhile).
      // Holds the binding strongly (a weak reference would give it a side table): until the minimum is over or the
      // wait is released (`releaseWait` cancels it).
      hold = Task { [self, clock = record.clock] in
        try? await DeadlineSleep.sleep(for: minimum, after: shownAt, on: clock)
        guard !Task.isCancelled else { return }
        self.hold = nil
        self.deliver(state)
      }
      return
    }
    defer { releaseWait() }
    if waitingLoad != 0, host.tracker.isCurrent(waitingLoad) {
      if let state {
        host.complete(with: .write(state))
        if state.isLoaded { shownVersion = entry?.version ?? 0 }
      } else if let error {
        host.complete(with: .write(.error(error)), keepingContent: true)
      }
    } else if let state {
      if state.isLoaded { host.keepError(nil) }
      host.store(state)
      host.publishActivity()
      if state.isLoaded { shownVersion = entry?.version ?? 0 }
    } else if let error {
      host.keepError(error)
      host.publishActivity()
    }
  }

  override func loadMore(_ plan: Any?, options: LoadOptions?, priority: TaskPriority?) -> Task<Void, Never>? {
    guard let host = host(), let entry else { return nil }
    let plan = plan as? LoadPlan<State>
    return host.loadMoreTask(hasPlan: plan != nil, priority: priority) {
      guard let plan else { return nil }
      entry.fetchPage(
        plan, options: PageLoad.options(options, declared: declaredOptions), priority: priority, requestedBy: self)
      return host.tracker.task
    }
  }

  /// Ends the wait of the state's waiting load (its block returns; the load ends unless the entry wrote it).
  @usableFromInline
  func releaseWait() {
    hold?.cancel()
    hold = nil
    waitingLoad = 0
    waitSignal?.signal(true)
    waitSignal = nil
  }

  override func unbind() {
    entry?.bindingDidLeave(self)
  }

  override var isBound: Bool { entry != nil }
}

public import CProcessedAtomics

/// One key's value in a ``LoadCache``: the value (if any), its last error, when it was written, whether it was
/// invalidated, the fetch in flight and the states bound to it.
///
/// The entry's fetch is a load like any other, run by the one engine (the entry is its host): retry, timeout, the
/// limiter, the clock and latest-wins hold for it. Its outcome goes to the entry, then to every bound state in the
/// order they were bound, through each state's own write path. `set`, `remove`, `removeAll`, `invalidate` and a
/// restarted fetch supersede the fetch in flight, so a fetch started before them never writes.
@usableFromInline @MainActor
final class CacheEntry<Value: Sendable>: AnyCacheEntry, StateHost {
  @usableFromInline typealias State = LoadableState<Value>

  /// The store of the cache the entry belongs to, held strongly (see ``CacheStore``): the cycle ends when the entry
  /// leaves the store, or when the store is closed.
  @usableFromInline let store: CacheStore
  /// The cache's clock: the time without reaching the store, and which cache the entry belongs to (by identity).
  @usableFromInline let clock: CacheClock
  // The fields a fresh hit reads are `@exclusivity(unchecked)`: main actor, short accesses (Unsafe/README.md,
  // invariant 1).
  @usableFromInline @exclusivity(unchecked) var value: Value?
  /// When the value was written, on the cache's clock (an offset from its origin).
  @usableFromInline @exclusivity(unchecked) var writtenAt: Duration = .zero
  // The flags sit together: a class's fields are laid out in order, so each flag between two words would take a word.
  @usableFromInline @exclusivity(unchecked) var invalidated = false
  /// Whether the entry has fetched (then a binding call no longer replaces `block`).
  @usableFromInline @exclusivity(unchecked) var hasFetched = false
  /// Whether the fetch in flight was started by the callers of `value(for:options:fetch:)` (its block answers them when
  /// the entry leaves).
  @usableFromInline @exclusivity(unchecked) var ownsFetch = false
  /// Whether the entry's value is also published for readers off the main actor — every entry of a cache that
  /// `value(for:options:fetch:)` or an actor-owned state has read (see `CacheStore+Published.swift`).
  @usableFromInline @exclusivity(unchecked) var isPublished = false
  /// Changes with each write of ``value`` (a fetch, `set`, a mutation's shown value): a bound state written at the
  /// current version shows the value (see ``CacheBinding/shownVersion``). Versions are never reused, across the
  /// entries of every cache (`processed_next_cache_version`), so that an actor-owned state that showed another
  /// entry's value at the same count is not taken to show this one's.
  @usableFromInline @exclusivity(unchecked) var version: UInt64 = processed_next_cache_version()
  /// Pages, `value(for:)` callers, persistence and revalidation (see ``EntryExtras``); `nil` until one is needed.
  @usableFromInline @exclusivity(unchecked) var extras: EntryExtras<Value>?
  /// The bound states, in the order they were bound.
  @usableFromInline @exclusivity(unchecked) var bindings: [CacheBinding<Value>] = []
  /// The block of the last fetch, or of the last call that bound a state before any fetch (what `invalidate` runs).
  /// Kept here rather than in `recipe`: a fresh hit of an entry that never fetched records its call's block.
  @usableFromInline @exclusivity(unchecked) var block: (@MainActor () async throws -> Value)?
  /// The options of the last fetch or binding call, and the last fetch's error; `nil` until a call gives options or a
  /// fetch fails.
  @usableFromInline @exclusivity(unchecked) var recipe: FetchRecipe?
  @usableFromInline var lastError: (any Error)? { recipe?.lastError }

  /// The recipe, made on first need.
  @usableFromInline
  var madeRecipe: FetchRecipe {
    if let recipe { return recipe }
    let made = FetchRecipe()
    recipe = made
    return made
  }

  // StateHost (main actor, short accesses: `@exclusivity(unchecked)`, Unsafe/README.md invariant 1)
  @usableFromInline @exclusivity(unchecked) var tracker = LoadTracker()
  @usableFromInline @exclusivity(unchecked) var activityRecord: ActivityRecord?
  /// Never set: an entry's fetches are not debounced (debounce acts on the calling state), so no call is timed.
  @usableFromInline var lastLoadCall: LoadCallMark? {
    get { nil }
    set {}
  }
  /// Never made: a fetch holds its entry through a reference of its own (`loadsRetainHost`).
  @usableFromInline var sharedHostReference: HostReference<CacheEntry>? {
    get { nil }
    set {}
  }
  @usableFromInline var declaredOptions: LoadOptions.Resolved? { nil }
  @usableFromInline static var isReleasedOnMainActorOnly: Bool { false }
  /// A fetch holds its entry: the entry's states stop it by leaving, and the entry has no weak reference to pay for.
  @usableFromInline static var loadsRetainHost: Bool { true }

  @inlinable
  init(key: AnyCacheKey, store: CacheStore) {
    self.store = store
    clock = store.clock
    super.init(key: key)
  }

  @usableFromInline
  var currentState: State {
    if let value { return .loaded(value) }
    if let lastError { return .error(lastError) }
    return .absent
  }

  @inlinable var isFetching: Bool { tracker.isRunning }

  override var isIdle: Bool { idle }
  override var holdsSomething: Bool { holds }

  /// No bound state and no fetch. `count == 0`, not `isEmpty`: `isEmpty` (a `Collection` default) looks the array's
  /// type up at run time where the entry's code runs unspecialized.
  @inlinable final var idle: Bool { bindings.count == 0 && !isFetching }
  /// A value or a last error.
  @inlinable final var holds: Bool { value != nil || lastError != nil }

  /// Tells the cache when the entry became idle: from the entry's own (specialized) code, which reads its state
  /// directly, not through the overrides the cache's sweep calls.
  @inlinable
  final func noteIfIdle(written: Bool = false) {
    guard idle else { return }
    store.entryIsIdle(self, holdsSomething: holds, written: written)
  }

  /// Whether the value is fresh: written less than `staleTime` ago and not invalidated.
  @inlinable
  func isFresh(staleTime: Duration) -> Bool {
    guard value != nil else { return false }
    return Freshness.isFresh(writtenAt: writtenAt, invalidated: invalidated, staleTime: staleTime, now: clock.now())
  }

  // MARK: Binding

  /// Binds `binding`'s state (it left any earlier entry first), and records the call for `invalidate`.
  @inlinable
  func bind(_ binding: CacheBinding<Value>, _ call: CachedLoad.Call<Value>) {
    binding.entry = self
    if bindings.isEmpty {
      store.scheduleBindingCheck(self)
      store.boundEntries[ObjectIdentifier(self)] = self
    }
    bindings.append(binding)
    CacheBindings.add(binding)
    idleStamp = 0
    record(call)
  }

  /// Records a binding call's block and options for `invalidate`, until the entry has fetched.
  @inlinable
  func record(_ call: CachedLoad.Call<Value>) {
    let options = call.givenOrDeclared
    record(call.block, options: options)
    if options?.refetchInterval != nil || call.binding.refetchInterval != nil { notePolling(of: call.binding, options) }
  }

  /// ``record(_:)`` of a call's block and options (`nil`: `.default`).
  @inlinable
  func record(_ block: @escaping @MainActor () async throws -> Value, options: LoadOptions?) {
    guard !hasFetched else { return }
    self.block = block
    // Most calls give no options: no `LoadOptions` is copied or destroyed, and no recipe made, for them.
    if options != nil || recipe?.options != nil { madeRecipe.options = options }
  }

  /// A bound state binds again: it is now the last bound (the order the entry writes its states in).
  @inlinable
  func moveToEnd(_ binding: CacheBinding<Value>) {
    guard bindings.last !== binding, let index = bindings.firstIndex(where: { $0 === binding }) else { return }
    bindings.remove(at: index)
    bindings.append(binding)
  }

  override var isBound: Bool { bindings.count != 0 }

  override func dropReleasedBindings() {
    // By index first: unspecialized, a `filter` allocated on every revalidation even when it found nothing.
    var index = 0
    while index < bindings.count, bindings[index].isAlive { index += 1 }
    guard index < bindings.count else { return }
    let released = bindings.filter { !$0.isAlive }
    for binding in released { remove(binding) }
    cancelFetchIfUnwaited()
  }

  /// A bound state left (its next load, `cancel()`, `reset()`, a manual write): once no state is bound — every bound
  /// state waits for the fetch in flight, also one that took a fresh value without a load of its own — and no
  /// `value(for:)` caller waits, the fetch is cancelled and the entry stays as it was.
  func bindingDidLeave(_ binding: CacheBinding<Value>) {
    remove(binding)
    cancelFetchIfUnwaited()
    noteIfIdle()
  }

  /// Cancels the fetch in flight once nobody waits for it: no state is bound and no `value(for:options:fetch:)` caller
  /// waits (a caller that joined a state's fetch keeps it running when the state leaves).
  func cancelFetchIfUnwaited() {
    guard isFetching, bindings.isEmpty, callers?.hasWaiters != true else { return }
    cancelLoad()
  }

  @inlinable
  func remove(_ binding: CacheBinding<Value>) {
    if let index = bindings.firstIndex(where: { $0 === binding }) { bindings.remove(at: index) }
    let polled = binding.refetchInterval != nil
    detach(binding)
    if bindings.isEmpty { store.boundEntries[ObjectIdentifier(self)] = nil }
    if polled { updatePolling() }
  }

  /// Unbinds `binding`, no longer in ``bindings``: it forgets the entry, its wait is released, it leaves
  /// ``CacheBindings``.
  @usableFromInline
  func detach(_ binding: CacheBinding<Value>) {
    binding.entry = nil
    binding.shownVersion = 0
    binding.refetchInterval = nil
    binding.releaseWait()
    CacheBindings.remove(binding)
  }

  // MARK: Fetching

  /// Starts a fetch (superseding one in flight) with `block` and `options`; every bound state that does not wait yet
  /// gets a load that waits for it (writing no `.loading`: it keeps what it shows) — but `caller`, whose own call
  /// starts its waiting load right after.
  ///
  /// `allPages`: a background fetch of a paged list fetches the pages it had loaded too, and writes the list once; a
  /// user's `refresh` (`false`) fetches the first page alone.
  @inlinable
  func fetch(
    _ block: @escaping @MainActor () async throws -> Value, options: LoadOptions?, priority: TaskPriority?,
    except caller: CacheBinding<Value>? = nil, allPages: Bool = true
  ) {
    self.block = block
    hasFetched = true
    revalidation?.stopPolling()
    pendingPagesAfterFirst = 0
    let block = allPages && pagesAfterFirst > 0 ? withLoadedPages(block) : block
    if options != nil || recipe?.options != nil { madeRecipe.options = options }
    let wasPaused = isPaused
    let plan = gated(.load(returning: block), options: options)
    if let options {
      start(plan, silently: true, options: options.forFetch, priority: priority)
    } else {
      // No options: a plain fetch (an entry declares none), with no options copied on the way.
      start(plan, silently: true, priority: priority)
    }
    for binding in bindings where binding !== caller && !binding.isWaiting {
      binding.startWaitingLoad(silently: true, priority: priority)
    }
    if wasPaused || isPaused { showPaused(isPaused, except: caller) }
  }

  /// `block` (the first page's fetch) followed by the fetches of the pages the list has after its first, when the entry
  /// knows how to fetch them (a `loadMore` went through it).
  @usableFromInline
  func withLoadedPages(
    _ block: @escaping @MainActor () async throws -> Value
  ) -> @MainActor () async throws -> Value {
    guard let more = pageRefill?.more else { return block }
    let count = pagesAfterFirst
    pendingPagesAfterFirst = count
    return { try await more(try await block(), count) }
  }

  /// Fetches the next page for a bound state's `loadMore` (`plan` appends it to the list the state shows), superseding
  /// a fetch in flight. Every bound state waits for it as for a fetch, and a later `loadMore` of any of them joins it.
  /// The last fetch's block stays the one `invalidate` runs: it loads the first page again.
  func fetchPage(
    _ plan: LoadPlan<State>, options: LoadOptions?, priority: TaskPriority?, requestedBy requester: CacheBinding<Value>
  ) {
    if let refill = plan.pageRefill as? PageRefill<Value> { pageRefill = refill }
    ownsFetch = false
    revalidation?.stopPolling()
    pendingPagesAfterFirst = pagesAfterFirst + 1
    let wasPaused = isPaused
    start(gated(plan, options: options), silently: true, options: options, priority: priority)
    for binding in bindings where binding === requester || !binding.isWaiting {
      binding.startWaitingLoad(silently: true, priority: priority, appendingPage: true)
    }
    if wasPaused || isPaused { showPaused(isPaused) }
  }

  /// Fetches again with the block and options of the last fetch or binding call, when a state is bound — never for a
  /// state that is gone (a key-path state's owner that went away leaves here).
  @usableFromInline
  override func invalidate() {
    invalidated = true
    if isPublished { publishValue() }
    // Callers waiting in `value(for:fetch:)` count as bound: their fetch starts again.
    let callersWait = callers?.hasWaiters == true
    guard !bindings.isEmpty || callersWait else { return }
    dropReleasedBindings()
    guard !bindings.isEmpty || callersWait, let block else {
      noteIfIdle()
      return
    }
    fetch(block, options: recipe?.options, priority: nil)
  }

  /// The fetch's outcome (the engine writes it after ending the fetch): to the entry, then to each bound state.
  @inlinable
  func store(_ state: State) {
    // A fetch that ends while a mutation of the key runs is dropped: its answer may predate the mutation. Its
    // callers end with it all the same.
    if store.isMutating(key) {
      if callers != nil {
        if case .loaded(let answer) = state { endCallers(.success(answer)) }
        noteIfIdle()
      }
      return
    }
    switch state {
    case .loaded(let newValue):
      pagesAfterFirst = pendingPagesAfterFirst
      write(newValue)
    case .error(let error):
      madeRecipe.lastError = error
      deliverToBindings(value == nil ? .error(error) : nil, error: error)
      if callers != nil {
        endCallers(.failure(error))
        noteIfIdle(written: true)
      }
    case .loading, .absent:
      break
    }
  }

  /// Writes `newValue` (fresh from now) and `.loaded(newValue)` to every bound state.
  /// `base`: the value to store for a persisted key when `newValue` has mutations' updates applied (a `set` while the
  /// key's mutations run); an optimistic value is never stored.
  @inlinable
  func write(_ newValue: Value, base: Value? = nil) {
    value = newValue
    version = processed_next_cache_version()
    recipe?.lastError = nil
    writtenAt = store.takeQueuedCallTime().map { max($0, writtenAt) } ?? clock.now()
    invalidated = false
    if isPublished { publishValue() }
    if let persisted { store(base ?? newValue, as: persisted) }
    deliverToBindings(.loaded(newValue))
    if callers != nil {
      endCallers(.success(newValue))
      noteIfIdle(written: true)
    }
  }

  /// Shows a mutation's value: to the entry and every bound state, as plain writes (a waiting load goes on waiting for
  /// its fetch). The value's time stamp stays the last fetch's or `set`'s.
  func show(_ newValue: Value) {
    value = newValue
    version = processed_next_cache_version()
    if isPublished { publishValue() }
    deliverToBindings(.loaded(newValue), endingWaits: false)
  }

  @inlinable
  func deliverToBindings(_ state: State?, error: (any Error)? = nil, endingWaits: Bool = true) {
    // The states as they were bound when the write began (observers may unbind some meanwhile), read by index: the
    // cache's code runs unspecialized, and an iterator over `[CacheBinding<Value>]` looks its type up at run time.
    let bound = bindings
    var releasedAny = false
    for index in bound.indices {
      let binding = bound[index]
      // An observer of an earlier state may have unbound this one (reset it, loaded it): it is not written.
      guard binding.entry === self else { continue }
      if !binding.deliver(state, error: error, endingWait: endingWaits) {
        remove(binding)
        releasedAny = true
      }
    }
    // A state whose owner went away left: the entry may be idle from now.
    if releasedAny { noteIfIdle() }
  }

  /// The fetch's block threw `ResetLoadable`: the fetch ends, the entry keeps what it holds, and each state that waited
  /// for the fetch acts on it as its own load would — it is reset (which unbinds it), as if it had thrown it itself.
  @usableFromInline
  func loadAskedForReset() {
    resetState()
    // `value(for:)` callers have no state to reset: they end as cancelled.
    endCallers(.failure(CancellationError()))
    for binding in bindings where binding.isWaiting {
      binding.host()?.resetState()
    }
  }

  /// The fetch ended (its outcome, if any, is written right after): the blocks of the states' waiting loads may
  /// return. A restarted fetch does not end the first (the waits go on).
  @inlinable
  func loadDidEnd() {
    let bound = bindings
    for index in bound.indices { bound[index].waitSignal?.signal(true) }
    noteFetchEnd()
    // With callers of `value(for:fetch:)` waiting, the outcome written next decides what is kept (see `store`).
    if callers == nil { noteIfIdle() }
  }

  override func drop() { dropEntry() }

  override func revalidate(now: Duration, throttle: Duration, focusReturned: Bool) {
    revalidateEntry(now: now, throttle: throttle, focusReturned: focusReturned)
  }

  override func focusLost() { updatePolling() }

  override func startPublishing() {
    guard !isPublished else { return }
    isPublished = true
    publishValue()
  }
}

/// The faces of an actor-owned state that its ``StateMirror`` runs: cached loads, `loadMore`, calm presentation — what
/// the owner writes at once, and the operation the shadow runs.
extension IsolatedStateStorage {
  /// The options a call runs with: its own, else the declaration's.
  @inlinable
  func effectiveOptions(_ options: LoadOptions?) -> LoadOptions? {
    options ?? declaredOptions?.options
  }

  /// The options of a plain load when they present it calmly (a loading delay, a minimum loading time, or a restore on
  /// cancellation): such a load runs through the mirror. `nil`: the load runs on the owner's own engine.
  @inlinable
  func calmOptions(_ options: LoadOptions?) -> LoadOptions.Resolved? {
    // The declaration's options are resolved already. Compared with `nil` before it is bound: binding it first copies
    // the whole `LoadOptions?` (about 260 bytes, through an outlined copy), also when it is `nil`.
    guard options != nil, let options else { return declaredOptions.flatMap { $0.presentsCalmly ? $0 : nil } }
    if options.loadingDelay == nil, options.minimumLoadingTime == nil, options.cancellation == .keepState {
      return nil
    }
    let resolved = LoadOptions.Resolved(options)
    return resolved.presentsCalmly ? resolved : nil
  }

  /// A cached load or refresh of `key` in `cache` through the mirror (see `LoadableController.load(_:in:…)`). The owner
  /// writes at once what the cache's published table tells it: the entry's value (a hit; fresh, nothing more runs),
  /// else `.loading` (unless silent, a refresh of a value, or delayed by `loadingDelay` or a debounce).
  func startCached<Value>(
    _ key: CacheKey<Value>, in cache: LoadCache, silently: Bool, options: LoadOptions?, priority: TaskPriority?,
    refreshing: Bool, isolation: isolated (any Actor),
    block: nonisolated(nonsending) @escaping () async throws -> Value
  ) -> Task<Void, Never> where State == LoadableState<Value> {
    claim(isolation)
    let options = effectiveOptions(options)
    if options?.overlap == .joinRunning, let joined = joinRunningLoad(priority: priority, isolation: isolation) {
      return joined
    }
    let fetch = OwnerBlock<Void, Value>(block, owner: isolation)
    var guess: (state: State, version: UInt64)?
    var running = true
    // `options` are the call's or the declaration's already.
    let staleTime = Freshness.staleTime(given: options, declared: nil, cache: cache.staleTime)
    if let hit = cache.store.publishedValue(for: key, staleTime: staleTime) {
      guess = (.loaded(hit.value), hit.version)
      running = refreshing || !hit.fresh
    } else if !silently, !(refreshing && state.holdsValue), options?.loadingDelay == nil, options?.debounce == nil {
      guess = (.loading, 0)
    }
    let restores = options?.cancellation == .restorePreviousState
    return startMirrored(
      supersedes: true, guess: guess, activity: running ? LoadActivity(phase: .running(attempt: 1)) : nil,
      restoresOnCancel: restores, priority: priority, isolation: isolation
    ) { controller in
      let task =
        refreshing
        ? controller.refresh(key, in: cache, options: options, priority: priority) { try await fetch.run(()) }
        : controller.load(key, in: cache, silently: silently, options: options, priority: priority) {
          try await fetch.run(())
        }
      // From now on the entry's changes are visible off the main actor: the next call of any actor-owned state can
      // write its value at once.
      if let entry = cache.store.entry(for: key) { cache.store.startPublishing(entry) }
      return task
    }
  }

  /// A load whose options present it calmly, through the mirror (see `LoadableController.load(silently:options:…)`):
  /// the owner writes `.loading` at once unless silent, a refresh of a value, or delayed by `loadingDelay`.
  @usableFromInline
  func startCalm<Value>(
    _ options: LoadOptions.Resolved, silently: Bool, priority: TaskPriority?, refreshing: Bool,
    isolation: isolated (any Actor), block: nonisolated(nonsending) @escaping () async throws -> Value
  ) -> Task<Void, Never> where State == LoadableState<Value> {
    claim(isolation)
    if options.options.overlap == .joinRunning, let joined = joinRunningLoad(priority: priority, isolation: isolation) {
      return joined
    }
    let run = OwnerBlock<Void, Value>(block, owner: isolation)
    let quiet = silently || (refreshing && state.holdsValue)
    // A delayed or debounced start state is the shadow's to write, when its time comes.
    let delayed = options.loadingDelay != nil || options.options.debounce != nil
    let guess: (state: State, version: UInt64)? = quiet || delayed ? nil : (.loading, 0)
    let plain = options.options
    return startMirrored(
      supersedes: true, guess: guess, activity: LoadActivity(phase: .running(attempt: 1)),
      restoresOnCancel: options.restoresOnCancel, priority: priority, isolation: isolation
    ) { controller in
      if refreshing {
        return controller.refresh(options: plain, priority: priority) { try await run.run(()) }
      }
      return controller.load(silently: silently, options: plain, priority: priority) { try await run.run(()) }
    }
  }

  /// A `loadMore` through the mirror (see `LoadableController.loadMore(options:priority:block:)`). It does nothing —
  /// its task ends at once — unless the state is `.loaded` with more pages and no load of the owner's own runs; it
  /// joins what the state follows (a cached entry's fetch, an earlier `loadMore`) rather than superseding it.
  func startLoadMore<Item: Sendable, Cursor: Sendable>(
    options: LoadOptions?, priority: TaskPriority?, isolation: isolated (any Actor),
    block: nonisolated(nonsending) @escaping (Cursor) async throws -> Pages<Item, Cursor>
  ) -> Task<Void, Never> where State == LoadableState<Pages<Item, Cursor>> {
    claim(isolation)
    guard !tracker.isRunning, case .loaded(let pages) = state, pages.hasMore else { return Self.nothingToDo }
    // A `loadMore` in progress is joined here, when the call is made, not when it reaches the shadow (by then it may
    // have ended, and the call would load the next page).
    if followsRunningMirror, mirrorLoadsMore { return joinFollowedLoad(priority: priority, isolation: isolation) }
    let fetch = OwnerBlock<Cursor, Pages<Item, Cursor>>(taking: block, owner: isolation)
    let options = effectiveOptions(options)
    // A `loadMore` that starts a load (rather than joining the one the state follows) is not joined by `.joinRunning`.
    let startsLoad = !followsRunningMirror
    let task = startMirrored(
      supersedes: false, guess: nil, activity: LoadActivity(phase: .running(attempt: 1)), priority: priority,
      isolation: isolation
    ) { controller in
      controller.loadMore(options: options, priority: priority) { cursor in try await fetch.run(cursor) }
    }
    if startsLoad { mirrorLoadsMore = true }
    return task
  }

  /// The task of a call that does nothing.
  static var nothingToDo: Task<Void, Never> { Task {} }
}

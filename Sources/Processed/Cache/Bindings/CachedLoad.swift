/// A load or refresh of a state from a ``LoadCache`` entry: what the cached faces of ``LoadableController`` and
/// ``LoadableSupport`` share.
///
/// The call binds the state to the key's entry (leaving any earlier one). A fresh value is written at once and
/// nothing runs. Otherwise the state shows the entry's value at once, if it has one, and starts a load that waits for
/// the entry's fetch — joining the fetch in flight, or starting one (`refresh` always restarts it) — whose outcome
/// the entry writes to every bound state. A debounced call does all this once its debounce is over, from inside the
/// state's own (debounced) load; a call that `.joinRunning` joins to its state's load does nothing to the cache.
@usableFromInline @MainActor
enum CachedLoad {
  /// One cached call, as its face made it. Its options are read where needed, never copied whole on the way: a
  /// fresh hit needs only the stale time.
  @usableFromInline @MainActor
  struct Call<Value: Sendable> {
    @usableFromInline let binding: CacheBinding<Value>
    @usableFromInline let key: CacheKey<Value>
    @usableFromInline let cache: LoadCache
    @usableFromInline let silently: Bool
    /// The call's options; `nil`: the declaration's (`declared`), else `.default`.
    @usableFromInline let given: LoadOptions?
    @usableFromInline let declared: LoadOptions.Resolved?
    @usableFromInline let refreshing: Bool
    @usableFromInline let block: @MainActor () async throws -> Value

    @inlinable
    init(
      _ binding: CacheBinding<Value>, _ key: CacheKey<Value>, _ cache: LoadCache, silently: Bool,
      options: LoadOptions?, refreshing: Bool, block: @escaping @MainActor () async throws -> Value
    ) {
      self.binding = binding
      self.key = key
      self.cache = cache
      self.silently = silently
      given = options
      declared = options == nil ? binding.declaredOptions : nil
      self.refreshing = refreshing
      self.block = block
    }

    /// The options the call stands for (for its fetch, or to record it): its own, else the declaration's; `nil` when
    /// neither gives any (then its loads are plain: `.default`).
    @inlinable var givenOrDeclared: LoadOptions? { given ?? declared?.options }
    @inlinable var debounce: Debounce? { given != nil ? given?.debounce : declared?.options.debounce }
    @inlinable var joinsRunning: Bool { (given?.overlap ?? declared?.options.overlap) == .joinRunning }
    /// How long a value stays fresh for this call.
    @inlinable var staleTime: Duration {
      Freshness.staleTime(given: given, declared: declared, cache: cache.staleTime)
    }
  }

  /// The Task form: the returned task ends when the fetch the call started or joined has ended.
  @inlinable
  static func start<Value>(
    _ binding: CacheBinding<Value>, key: CacheKey<Value>, cache: LoadCache, silently: Bool, options: LoadOptions?,
    priority: TaskPriority?, refreshing: Bool, block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    cache.store.runQueuedCalls()
    let call = Call(
      binding, key, cache, silently: silently, options: options, refreshing: refreshing, block: block)
    if let join = joinRunning(call, priority: priority) { return join }
    if call.debounce != nil || restores(call) {
      return binding.startLoad(deferredPlan(call), silently: true, options: debounceOptions(call), priority: priority)
        .task
    }
    guard let (entry, silently) = bindNow(call) else { return KeyPathTargetEnded.task }
    // The fetch's task is queued before the waiting load's: when the fetch is quick, the waiting load finds it ended
    // and ends without suspending (measured: a miss cycle 3.1× → 2.2× an uncached one). Nothing is written meanwhile.
    fetchIfNeeded(entry, call, priority: priority, except: binding)
    return binding.startWaitingLoad(silently: silently, options: presentation(call), priority: priority)
  }

  /// The `async` form: returns when the fetch the call started or joined has ended.
  @inlinable
  static func run<Value>(
    _ binding: CacheBinding<Value>, key: CacheKey<Value>, cache: LoadCache, silently: Bool, options: LoadOptions?,
    refreshing: Bool, block: @escaping @MainActor () async throws -> Value
  ) async {
    cache.store.runQueuedCalls()
    let call = Call(
      binding, key, cache, silently: silently, options: options, refreshing: refreshing, block: block)
    if let join = joinRunning(call, priority: nil) {
      await AwaitedLoad(task: join, forwardsCancellation: true).wait()
      return
    }
    if call.debounce != nil || restores(call) {
      await binding.startAwaitedLoad(deferredPlan(call), silently: true, options: debounceOptions(call)).load.wait()
      return
    }
    guard let (entry, silently) = bindNow(call) else { return }
    fetchIfNeeded(entry, call, priority: nil, except: binding)
    let options = presentation(call)
    // A wrapper's state (a key-path host may be made for the call and kept alive only by a load's task).
    if options?.isPlain ?? true, let wrapper = binding as? StorageCacheBinding<Value>, let storage = wrapper.storage,
      !storage.tracker.isRunning, !Task.isCancelled
    {
      await waitInCaller(binding, storage, entry, silently: silently, options: options)
      return
    }
    await binding.startAwaitedWaitingLoad(silently: silently, options: options).wait()
  }

  /// The waiting load of an `async` call, run in the caller's task: what the waiting plan's task would do — wait
  /// until the entry's fetch ends or the state is unbound (the entry writes the outcome and ends the load), then end
  /// the load if it is still current — without a task of its own. Taken when the call presents nothing calmly, no
  /// load of the state runs (so starting this one cannot cancel the caller's own task), the state is a wrapper's and the
  /// caller is not cancelled: cancelling the caller then cancels this load, as cancelling the waiting task would.
  @inlinable
  static func waitInCaller<Value>(
    _ binding: CacheBinding<Value>, _ host: StateStorage<LoadableState<Value>>, _ entry: CacheEntry<Value>,
    silently: Bool, options: LoadOptions?
  ) async {
    let signal = FirstSignal<Bool>()
    binding.waitSignal = signal
    let id = CacheBindings.asCache(binding.id) {
      host.launchInCaller(.loading, writingStartState: !silently, options: options, paused: entry.isPaused)
    }
    binding.waitingLoad = id
    await LoadJoin.wait(until: signal)
    host.finish(id, with: .done)
  }

  /// With `.joinRunning`, a call made while the state's own load is in progress joins it and does nothing to the
  /// cache (see `StateHost.startShaped`).
  @inlinable
  static func joinRunning<Value>(_ call: Call<Value>, priority: TaskPriority?) -> Task<Void, Never>? {
    guard call.joinsRunning, let host = call.binding.host(), host.tracker.isJoinable else { return nil }
    let ended = host.tracker.join()
    return Task(priority: priority) { await LoadJoin.wait(until: ended) }
  }

  /// The state's own options for the load that waits for the entry: the call's calm presentation (its loading delay,
  /// minimum loading time and cancellation behaviour) on the call's clock; the rest is the fetch's. `nil`: a plain
  /// load (the call and the declaration give no options).
  @inlinable
  static func presentation<Value>(_ call: Call<Value>) -> LoadOptions? {
    call.givenOrDeclared?.forScreen
  }

  /// The state's own options for a debounced call: the debounce on the options' clock; the rest is the fetch's.
  @usableFromInline
  static func debounceOptions<Value>(_ call: Call<Value>) -> LoadOptions {
    LoadOptions(
      debounce: call.debounce, clock: call.given?.clock ?? LoadOptions.clock(of: call.declared))
  }

  /// Whether the call waits for its key's record first (a persisted key whose entry is not in memory, or reads it).
  @inlinable
  static func restores<Value>(_ call: Call<Value>) -> Bool {
    call.key.persistence != nil && call.cache.store.needsRestore(call.key)
  }

  /// The load of the state for a call that cannot act at once — debounced, or waiting for its key's record: once the
  /// debounce is over and the record read (and the load is still current), it binds and acts as an immediate call
  /// would, writing through `yield`, and then waits for the entry's fetch. Nothing is written before.
  @usableFromInline
  static func deferredPlan<Value>(_ call: Call<Value>) -> LoadPlan<LoadableState<Value>> {
    .load(yielding: { yield in
      guard let id = LoadContext.binding.get()?.id else { return }
      if call.key.persistence != nil {
        await call.cache.store.restore(call.key)
        guard !Task.isCancelled else { return }
      }
      guard let (entry, value, fresh) = bind(call) else { return }
      if let value {
        yield(.loaded(value))
        if fresh { return }
      } else if !call.silently {
        yield(.loading)
      }
      let signal = FirstSignal<Bool>()
      call.binding.waitSignal = signal
      call.binding.waitingLoad = id
      fetchIfNeeded(entry, call, priority: nil)
      if entry.isPaused { entry.showPaused(true) }
      await LoadJoin.wait(until: signal)
    })
  }

  /// Binds the state and writes the entry's value at once, as the cache. Returns `nil` when the call is done (a
  /// fresh hit, or the state's owner is gone), else the entry and whether the waiting load writes no `.loading`.
  @inlinable
  static func bindNow<Value>(_ call: Call<Value>) -> (CacheEntry<Value>, Bool)? {
    guard let (entry, value, fresh) = bind(call) else { return nil }
    guard let value else { return (entry, call.silently) }
    call.binding.showAtOnce(value, version: entry.version)
    return fresh ? nil : (entry, true)
  }

  /// What binding found: the entry, its value (written by the caller at once) and whether that value is fresh.
  @usableFromInline typealias Bound<Value: Sendable> = (entry: CacheEntry<Value>, value: Value?, fresh: Bool)

  /// Binds the state to the call's entry; `nil` when the state's owner is gone.
  @inlinable
  static func bind<Value>(_ call: Call<Value>) -> Bound<Value>? {
    let binding = call.binding
    guard binding.isAlive else { return nil }
    let entry = call.cache.store.makeEntry(for: call.key)
    if let earlier = CacheBindings.current(of: binding), earlier !== binding || binding.entry !== entry {
      earlier.unbind()
    }
    // A state bound to this entry already keeps its binding object; binding again puts it last (bind order).
    if binding.entry === entry {
      entry.moveToEnd(binding)
      entry.record(call)
    } else {
      entry.bind(binding, call)
    }
    let fresh =
      !call.refreshing && entry.isFresh(staleTime: call.staleTime)
    return (entry, entry.value, fresh)
  }

  @inlinable
  static func fetchIfNeeded<Value>(
    _ entry: CacheEntry<Value>, _ call: Call<Value>, priority: TaskPriority?, except caller: CacheBinding<Value>? = nil
  ) {
    if call.refreshing || !entry.isFetching {
      entry.ownsFetch = false
      entry.fetch(
        call.block, options: call.givenOrDeclared, priority: priority, except: caller, allPages: !call.refreshing)
    }
  }
}

/// Something that owns one state and the load that drives it: a `@Loadable`/`@Process` wrapper's storage, or a key path
/// of a class.
///
/// The rules live once in the extension in `Engine.swift`.
@usableFromInline @MainActor
protocol StateHost<State>: AnyObject, Sendable {
  associatedtype State: ManagedState & Sendable

  /// The current load's bookkeeping.
  var tracker: LoadTracker { get set }
  /// The options of loads that were given none (a wrapper's declaration options); `nil`: `LoadOptions.default`.
  var declaredOptions: LoadOptions.Resolved? { get }
  /// What the host keeps about its state's activity beyond the tracker; `nil` until first needed.
  var activityRecord: ActivityRecord? { get set }
  /// When the last debounced load call was made (what a `.leading` debounce compares with); `nil`: none yet.
  var lastLoadCall: LoadCallMark? { get set }
  /// The state as it is now.
  var currentState: State { get }
  /// Stores `state` and notifies every observer of it.
  func store(_ state: State)
  /// ``store(_:)``, called on a host its caller does not retain (a `yield` reaching a main-actor host; see
  /// `HostReference.storeIfCurrent`): the host keeps itself alive until the call returns, also when the write ends
  /// its load.
  func storeUnretained(_ state: State)
  /// A hook, called before the engine changes what the state shows by a load's start, a cancellation, a reset or
  /// a manual write: a state bound to a cache entry leaves it (Cache/Bindings/StateHost+CacheHooks.swift).
  func stateWillChange()
  /// A hook for `loadMore`: `.some` when something other than the engine runs the state's `loadMore` (a cache entry
  /// the state is bound to), with what it returned; `.none`: the engine runs it.
  func loadMoreThroughHook(
    _ plan: LoadPlan<State>?, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never>??
  /// Called when the host no longer has a current load (it ended, was cancelled or reset).
  func loadDidEnd()
  /// The current load's block asked for a reset (it threw `ResetLoadable`, `ResetProcess`): resets the state.
  func loadAskedForReset()
  /// The current load ended with nothing to write: its block threw `CancellationError` or `CancelLoadable` while the
  /// load was current, or a yielding block returned. A cache entry ends the `value(for:)` callers waiting for it.
  func loadEndedWithoutOutcome()
  /// The reference to this host that its loads' tasks hold; see ``hostReference``.
  var sharedHostReference: HostReference<Self>? { get set }
  /// Whether only main-actor code ever holds a host of this type, so that it is always released there (its
  /// `deinit` must then call `sharedHostReference?.hostDidEnd()`).
  static var isReleasedOnMainActorOnly: Bool { get }
  /// Whether each load holds its host (a cache entry, whose fetch is stopped by its states leaving, not by the
  /// entry going away): the load's reference then retains it, and is made per load, not shared (shared, the host
  /// would hold the reference that holds it). No weak reference, so the host never gets a side table.
  static var loadsRetainHost: Bool { get }
}

extension StateHost {
  /// A host reached only through a reference that retains it (a weak one) is never called unretained: it stores as
  /// usual. Main-actor hosts (`KeyPathHost`) implement their own.
  @inlinable
  func storeUnretained(_ state: State) { store(state) }

  /// A host nothing plugs into (a cache entry) has no hooks.
  @inlinable
  func stateWillChange() {}

  @usableFromInline
  func loadMoreThroughHook(
    _ plan: LoadPlan<State>?, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never>?? { .none }

  /// A state's own load asking for a reset resets it. A cache entry (whose load is a fetch shared by the states
  /// bound to it) implements its own.
  @inlinable
  func loadAskedForReset() { resetState() }

  /// A state has nothing to do: it keeps what it shows. A cache entry implements its own.
  @inlinable
  func loadEndedWithoutOutcome() {}

  /// The reference to this host that its loads' tasks hold, made on first use.
  /// Hosts are not held by their loads unless they say so.
  @inlinable
  static var loadsRetainHost: Bool { false }

  @inlinable
  var hostReference: HostReference<Self> {
    if Self.loadsRetainHost { return HostReference(retaining: self) }
    if let made = sharedHostReference { return made }
    let made = HostReference(self, releasedOnMainActorOnly: Self.isReleasedOnMainActorOnly)
    sharedHostReference = made
    return made
  }
}

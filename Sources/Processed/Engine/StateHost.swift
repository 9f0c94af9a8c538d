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
  /// Which state this is, for a ``LoadCache`` binding; `nil` for a host that is not a user's state (a cache entry).
  var cacheIdentity: BoundStateID? { get }
  /// Whether the host keeps its cache binding itself (a wrapper's storage), rather than ``CacheBindings/table``.
  static var keepsCacheBinding: Bool { get }
  /// The binding the host keeps, when ``keepsCacheBinding``.
  var ownCacheBinding: AnyCacheBinding? { get }
  /// Called when the host no longer has a current load (it ended, was cancelled or reset).
  func loadDidEnd()
  /// The current load's block asked for a reset (it threw `ResetLoadable`, `ResetProcess`): resets the state.
  func loadAskedForReset()
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

  /// Most hosts' bindings are in ``CacheBindings/table``.
  @inlinable
  static var keepsCacheBinding: Bool { false }

  @inlinable
  var ownCacheBinding: AnyCacheBinding? { nil }

  /// A state's own load asking for a reset resets it. A cache entry (whose load is a fetch shared by the states
  /// bound to it) implements its own.
  @inlinable
  func loadAskedForReset() { resetState() }

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

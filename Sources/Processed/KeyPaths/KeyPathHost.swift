internal import CProcessedAtomics

/// The host of a state that lives at a key path of a class, for ``LoadableSupport`` and ``ProcessSupport``.
///
/// It exists only while a load runs, registered in `RunningKeyPathHosts`, and holds its model until then. See
/// Documentation/KeyPathWrites.md.
@usableFromInline @MainActor
final class KeyPathHost<Model: AnyObject, State: ManagedState & Sendable>: StateHost {
  // Main-actor fields touched in short accesses that never span a call to user code: their dynamic exclusivity
  // checks are skipped (`@exclusivity(unchecked)`), as in `StateStorage`; so are those of the main-actor tables below.
  @usableFromInline let model: Model
  /// Reads and writes the state (see ``KeyPathAccess``); the key path itself is in `key`.
  @usableFromInline @exclusivity(unchecked) var access: KeyPathAccess<Model, State>
  @usableFromInline @exclusivity(unchecked) var tracker = LoadTracker()
  /// Key-path states have no declaration options.
  @inlinable var declaredOptions: LoadOptions.Resolved? { nil }
  @usableFromInline @exclusivity(unchecked) var sharedHostReference: HostReference<KeyPathHost>?
  /// Only main-actor code holds a host: the table, the lookups and the engine (a load's task reaches it through
  /// `sharedHostReference`, which does not retain it).
  @inlinable static var isReleasedOnMainActorOnly: Bool { true }
  @usableFromInline let key: KeyPathHostKey
  /// The model's registry slot for `keyPath`, resolved once per host (that is, once per load); for a class that is
  /// not an ``ObservableModel``, the slot of the registry kept beside the state, once a controller observes it.
  @usableFromInline @exclusivity(unchecked) var link: SlotLink?
  /// Keeps a model registry's `link` valid (a registry kept beside the state is kept by `extras`).
  let anchor: ObserverSlot?

  @usableFromInline
  init(
    model: Model, keyPath: ReferenceWritableKeyPath<Model, State>, key: KeyPathHostKey,
    access: KeyPathAccess<Model, State>
  ) {
    self.model = model
    self.access = access
    self.key = key
    let modelLink = ParkedSlotLink.link(model, keyPath)
    anchor = modelLink?.anchor
    extras = KeyPathStateExtras.existing(for: model, key)
    link = modelLink ?? extras?.ownLink
  }

  deinit {
    sharedHostReference?.hostDidEnd()
  }

  @inlinable
  var currentState: State { access.read(model) }

  /// What outlives this host about its state (see ``KeyPathStateExtras``), once there is any.
  @usableFromInline @exclusivity(unchecked) var extras: KeyPathStateExtras?

  @usableFromInline
  var lastLoadCall: LoadCallMark? {
    get { extras?.lastLoadCall }
    set { makeExtras().lastLoadCall = newValue }
  }

  @usableFromInline
  var activityRecord: ActivityRecord? {
    get { extras?.activityRecord }
    set { makeExtras().activityRecord = newValue }
  }

  func makeExtras() -> KeyPathStateExtras {
    if let extras { return extras }
    let made = KeyPathStateExtras.make(for: model, key)
    extras = made
    return made
  }

  @inlinable
  func store(_ state: State) {
    // The last value (`lastValue` of a key-path controller) changes only when a state that holds a value is replaced
    // by one that holds none, or by the reset state: a write of a value (every `yield` of `.loaded`) does nothing
    // here. The extras are made at the first such change, so a controller made later still sees it.
    if State.keepsLastValue, !state.holdsValue { keepLastValue(replacedBy: state) }
    if let storage = access.storage(in: model) {
      if let link { link.storedWrite(state, into: storage) } else { storage.pointee = state }
      return
    }
    let address: UInt
    if let link {
      let (written, settled) = link.keyPathWrite(state, of: model, through: access)
      address = written
      if settled { access.settles = true }
    } else {
      address = access.write(model, state)
    }
    if access.storedOffset < 0 { learnStorage(from: address) }
  }

  /// After the first write: when it went straight to a stored property of the model, later writes store there
  /// (see ``StoredProperties``).
  @usableFromInline
  func learnStorage(from address: UInt) {
    access.storedOffset = StoredProperties.offset(of: address, in: model, as: State.self)
  }

  /// The state is about to be replaced by `state`, which holds no value: a reset forgets the last value, another state
  /// keeps it in the state's slot (``ObserverSlotMainFields/keptState``).
  ///
  /// Out of line: not on the path of a write of a value.
  @inlinable @inline(never)
  func keepLastValue(replacedBy state: State) {
    guard let link else { return }
    let fields = link.anchor.mainFields
    if state.isResetState {
      fields.pointee.keptState = nil
    } else {
      let old = currentState
      guard old.holdsValue else { return }
      if let kept = fields.pointee.keptState {
        // Reused: a slot belongs to one key path, so whatever it keeps is of this state type.
        unsafeDowncast(kept, to: KeptState<State>.self).state = old
      } else {
        fields.pointee.keptState = KeptState(old)
      }
    }
  }

  // MARK: Yields through an unretained reference
  //
  // Invariant: only the table and running main-actor code hold a running host, and the table lets go in `loadDidEnd`
  // only, which hands the host to `RunningKeyPathHosts.retired` while an unretained write is under way. See
  // Documentation/KeyPathWrites.md.

  /// How many unretained writes of this host are under way (nested writes are possible, from observers).
  @usableFromInline @exclusivity(unchecked) var unretainedWrites: UInt32 = 0
  /// The load ended during an unretained write: `RunningKeyPathHosts.retired` keeps the host until the write returns.
  @usableFromInline @exclusivity(unchecked) var isRetired = false

  @inlinable
  func storeUnretained(_ state: State) {
    unretainedWrites += 1
    store(state)
    unretainedWrites -= 1
    // Still alive here: held by the table, or retired (see above).
    if isRetired, unretainedWrites == 0 { RunningKeyPathHosts.release(retired: self) }
  }

  @inlinable
  func loadDidEnd() {
    if unretainedWrites != 0, !isRetired {
      isRetired = true
      RunningKeyPathHosts.retired.append(self)
    }
    RunningKeyPathHosts.forget(self, key)
  }

  /// The host of the running load at `keyPath` of `model`, if any.
  @inlinable
  static func running(_ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>) -> KeyPathHost? {
    if RunningKeyPathHosts.lastKeyPath == ObjectIdentifier(keyPath),
      RunningKeyPathHosts.lastInstance == ObjectIdentifier(model),
      let host = RunningKeyPathHosts.lastHost
    {
      // The same key path object means the same root and value types, so the host is of this type.
      return unsafeDowncast(host, to: KeyPathHost.self)
    }
    return RunningKeyPathHosts.runningHost(for: KeyPathHostKey(model, keyPath)) as? KeyPathHost
  }

  /// The host of the running load, or a new one registered as running (to start a load).
  @inlinable
  static func forLoad(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>, _ access: KeyPathAccess<Model, State>
  ) -> KeyPathHost {
    if let host = running(model, keyPath) { return host }
    let key = KeyPathHostKey(model, keyPath)
    let host = KeyPathHost(model: model, keyPath: keyPath, key: key, access: access)
    RunningKeyPathHosts.register(host, key)
    return host
  }

  /// Starts a load of `keyPath` of `model` (see `StateHost.start`), on the wrapper's own storage when the property is a
  /// wrapper (see ``WrapperLookup``).
  ///
  /// Always inlined, so the compiler sees the caller's key-path literal.
  @inlinable @inline(__always) @discardableResult
  static func start(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>, _ access: KeyPathAccess<Model, State>,
    _ plan: LoadPlan<State>, silently: Bool,
    options: LoadOptions?, priority: TaskPriority?, refreshing: Bool = false
  ) -> Task<Void, Never> {
    let (current, storage) = WrapperLookup.read(model, keyPath)
    if let storage {
      return storage.start(
        plan, silently: silently, options: options, priority: priority, currentState: current, refreshing: refreshing)
    }
    return forLoad(model, keyPath, access).start(
      plan, silently: silently, options: options, priority: priority, currentState: current, refreshing: refreshing)
  }

  /// Starts a load of `keyPath` of `model` for an `async` caller (see `StateHost.startAwaited`).
  @inlinable @inline(__always)
  static func startAwaited(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>, _ access: KeyPathAccess<Model, State>,
    _ plan: LoadPlan<State>, silently: Bool,
    options: LoadOptions?, refreshing: Bool = false
  ) -> AwaitedLoad {
    let (current, storage) = WrapperLookup.read(model, keyPath)
    if let storage {
      return storage.startAwaited(
        plan, silently: silently, options: options, currentState: current, refreshing: refreshing)
    }
    return forLoad(model, keyPath, access).startAwaited(
      plan, silently: silently, options: options, currentState: current, refreshing: refreshing)
  }

  /// A `loadMore` of `keyPath` of `model`, Task form (see ``PageLoad``): on the wrapper's storage when the property is
  /// a wrapper; a host is made only when the call starts a load. `nil`: the call does nothing.
  static func startLoadMore(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>, _ access: KeyPathAccess<Model, State>,
    _ makePlan: (State) -> LoadPlan<State>?, options: LoadOptions?, priority: TaskPriority?
  ) -> Task<Void, Never>? {
    let (current, storage) = WrapperLookup.read(model, keyPath)
    let plan = makePlan(current)
    if let storage {
      return storage.startLoadMore(plan, options: options, priority: priority, currentState: current)
    }
    guard let host = running(model, keyPath) ?? (plan == nil ? nil : forLoad(model, keyPath, access)) else {
      return nil
    }
    return host.startLoadMore(plan, options: options, priority: priority, currentState: current)
  }

  /// A `loadMore` of `keyPath` of `model`, `async` form. `nil`: the call does nothing.
  static func startAwaitedLoadMore(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>, _ access: KeyPathAccess<Model, State>,
    _ makePlan: (State) -> LoadPlan<State>?, options: LoadOptions?
  ) -> AwaitedLoad? {
    let (current, storage) = WrapperLookup.read(model, keyPath)
    let plan = makePlan(current)
    if let storage {
      return storage.startAwaitedLoadMore(plan, options: options, currentState: current)
    }
    guard let host = running(model, keyPath) ?? (plan == nil ? nil : forLoad(model, keyPath, access)) else {
      return nil
    }
    return host.startAwaitedLoadMore(plan, options: options, currentState: current)
  }

  /// Cancels the running load of `keyPath` of `model`, if any.
  static func cancel(_ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>) {
    if let storage = WrapperLookup.read(model, keyPath).storage {
      storage.cancelLoad()
    } else if let host = running(model, keyPath) {
      host.cancelLoad()
    } else if processed_cache_bound_states() != 0 {
      CacheBindings.stateWillChange(BoundStateID(model, keyPath))
    }
  }

  /// Cancels the running load of `keyPath` of `model` and writes the reset state.
  static func reset(_ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>) {
    if let storage = WrapperLookup.read(model, keyPath).storage {
      storage.resetState()
    } else {
      // The host of the running load, or a detached one (not in the table) for a one-off reset.
      let host =
        running(model, keyPath)
        ?? KeyPathHost(
          model: model, keyPath: keyPath, key: KeyPathHostKey(model, keyPath), access: KeyPathAccess(keyPath))
      host.resetState()
    }
  }
}

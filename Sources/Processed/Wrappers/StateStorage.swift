/// The shared, reference-typed storage behind a `@Loadable` or `@Process` wrapper: the state, the load that drives
/// it, the wrapper's own observers and, inside an ``ObservableModel``, the link to the model's registry.
///
/// Copies of a wrapper share one storage, like SwiftUI's `@State`. When the last copy goes away, `deinit` cancels
/// the running load (whose task holds the storage only weakly).
@usableFromInline
final class StateStorage<State: ManagedState & Sendable>: StateHost, DeliversInOrder {
  // The storage's mutable properties are main-actor only and touched in short accesses that never overlap (no
  // access spans a call to user code), so their dynamic exclusivity checks are skipped: they cost more than a write.
  @usableFromInline @exclusivity(unchecked) var tracker = LoadTracker()
  @usableFromInline var sharedHostReference: HostReference<StateStorage>?
  /// A wrapper may be released on any thread: its loads hold it weakly.
  @inlinable static var isReleasedOnMainActorOnly: Bool { false }
  @usableFromInline @exclusivity(unchecked) var delivery = DeliveryState()
  @usableFromInline @exclusivity(unchecked) var currentState: State
  /// The wrapper's own observers (`$state.observe`, `$state.states`): one slot, made on first use. The storage
  /// owns it (`ownSlot`) and closes it when it goes away, so its observers (and `states` sequences) end then.
  /// `nonisolated(unsafe)`: a slot is thread-safe, and `deinit` closes it.
  nonisolated(unsafe) var ownSlot: ObserverSlot?
  @usableFromInline @exclusivity(unchecked) var ownObservers: SlotLink?
  /// The enclosing model's registry and slot, once resolved, and the strong reference that keeps them valid.
  @usableFromInline @exclusivity(unchecked) var modelLink: SlotLink?
  @usableFromInline var modelAnchor: ObserverSlot?
  /// Whether `modelLink` was looked for (a wrapper outside a model has none).
  @usableFromInline @exclusivity(unchecked) var modelLinkResolved = false

  @usableFromInline var lastLoadCall: LoadCallMark?
  @usableFromInline @exclusivity(unchecked) var activityRecord: ActivityRecord?
  /// The last state that held a value, while the state holds none (``LoadableController/lastValue``); the reset state
  /// when there is none (``ManagedState/keepLastValue(_:replacing:with:)``).
  @usableFromInline @exclusivity(unchecked) var keptState: State
  /// The declaration's options (`@Loadable(options:)`), for loads given none.
  @usableFromInline let declaredOptions: LoadOptions.Resolved?
  /// The state's binding to cache entries (a `StorageCacheBinding`), made on its first cached load and kept: a fresh
  /// hit reaches it without a table lookup. Bound exactly while its `entry` is set.
  @usableFromInline @exclusivity(unchecked) var cacheBinding: AnyCacheBinding?

  /// Inlined, so that it is specialized where a wrapper is made: a generic init wrote each field through the state's
  /// value witnesses.
  @inlinable
  nonisolated init(_ state: State, options: LoadOptions? = nil) {
    currentState = state
    keptState = State.resetState
    declaredOptions = options.map(LoadOptions.Resolved.init)
  }

  /// The last state that held a value, while the state holds none.
  @inlinable
  var lastValueState: State? { State.lastValue(in: keptState) }

  deinit {
    // Forgetting the load also ends the calls that joined it (`.joinRunning`).
    tracker.clear()?.cancel()
    ownSlot?.close()
    // A state that goes away leaves its cache entry at once: no fetch runs for it, and the entry may be collected.
    if let cacheBinding { CacheBindings.stateWentAway(cacheBinding) }
  }

  /// Always inlined: a write that stays in its caller's function has its exclusive accesses checked at compile
  /// time; out of line, each access to the storage's properties would pay a dynamic check.
  @inlinable @inline(__always)
  func store(_ state: State) {
    // A state that holds a value (and is not the reset state) leaves the kept last value as it is: the common write
    // of a value does not read and copy the current state for it.
    if !state.holdsValue || state.isResetState {
      State.keepLastValue(&keptState, replacing: currentState, with: state)
    }
    switch (ownObservers, modelLink) {
    case (nil, nil):
      currentState = state
    case (let own?, nil):
      currentState = state
      deliverInOrder(state, through: own)
    case (nil, let model?):
      let tracked = model.isTrackedByObservation
      if tracked { model.observationWillSet() }
      currentState = state
      if tracked { model.observationDidSet() }
      deliverInOrder(state, through: model)
    case (let own?, let model?):
      // Both snapshots first: an observer of one registry that registers with the other does not see this change.
      let recipients = ChangeRecipients(first: own.snapshot(for: state), second: model.snapshot(for: state))
      let tracked = model.isTrackedByObservation
      if tracked { model.observationWillSet() }
      currentState = state
      if tracked { model.observationDidSet() }
      deliverInOrder(state, to: recipients)
    }
  }

  @inlinable
  func loadDidEnd() {}

  /// Connects the storage to the model that contains it, the first time the model reaches it.
  @inlinable
  func connect<Model: AnyObject>(to model: Model, keyPath: KeyPath<Model, State>) {
    if modelLinkResolved { return }
    modelLinkResolved = true
    modelLink = SlotLink.resolve(model, keyPath: keyPath)
    modelAnchor = modelLink?.anchor
    modelLink?.resolveObservation(of: model, keyPath)
  }

  /// The state, read through the model that contains the wrapper (linking the two on first access).
  @inlinable
  func state<Model: AnyObject>(in model: Model, at keyPath: KeyPath<Model, State>) -> State {
    connect(to: model, keyPath: keyPath)
    if let modelLink, modelLink.isTrackedByObservation { modelLink.observationAccess() }
    return currentState
  }

  /// A manual write through the model that contains the wrapper (linking the two on first access).
  @inlinable
  func overwrite<Model: AnyObject>(_ state: State, in model: Model, at keyPath: KeyPath<Model, State>) {
    connect(to: model, keyPath: keyPath)
    overwrite(state)
  }

  /// Registers an observer of this state.
  @inlinable
  func observe(
    onRegistryEnd: (@Sendable () -> Void)? = nil,
    _ onChange: @escaping @MainActor (State) -> Void
  ) -> ObservationToken {
    let link = ownObservers ?? makeOwnObservers()
    return link.addObserver(onRegistryEnd: onRegistryEnd, onChange)
  }

  @usableFromInline
  func makeOwnObservers() -> SlotLink {
    let slot = ObserverSlot.make()
    let link = SlotLink(slot)
    ownSlot = slot
    ownObservers = link
    return link
  }

  /// The current state, then every change, until the iteration ends or the storage goes away.
  func states() -> AsyncStream<State> {
    AsyncStream.states(startingWith: currentState) { observe(onRegistryEnd: $0, $1) }
  }

  /// The number of observers of the wrapper itself (for tests).
  var ownObserverCount: Int { ownSlot?.observerCount ?? 0 }
}

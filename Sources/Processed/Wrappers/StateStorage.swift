/// The shared, reference-typed storage behind a `@Loadable` or `@Process` wrapper: the state, the load that drives
/// it, the wrapper's own observers and, inside an ``ObservableModel``, the link to the model's registry.
///
/// Copies of a wrapper share one storage, like SwiftUI's `@State`. When the last copy goes away, `deinit` cancels
/// the running load (whose task holds the storage only weakly).
@usableFromInline
final class StateStorage<State: ManagedState & Sendable>: StateHost, DeliversInOrder {
  @usableFromInline var tracker = LoadTracker()
  @usableFromInline var sharedHostReference: HostReference<StateStorage>?
  /// A wrapper may be released on any thread: its loads hold it weakly.
  @inlinable static var isReleasedOnMainActorOnly: Bool { false }
  @usableFromInline @exclusivity(unchecked) var delivery = DeliveryState()
  @usableFromInline var currentState: State
  /// The wrapper's own observers (`$state.observe`, `$state.states`), created on first use. The storage owns the
  /// registry, so its observers (and `states` sequences) end when the storage goes away.
  @usableFromInline var ownRegistry: ObserverRegistry?
  @usableFromInline var ownObservers: SlotLink?
  /// The enclosing model's registry and slot, once resolved, and the strong reference that keeps them valid.
  @usableFromInline var modelLink: SlotLink?
  @usableFromInline var modelAnchor: RegistryCore?
  /// Whether `modelLink` was looked for (a wrapper outside a model has none).
  @usableFromInline var modelLinkResolved = false
  /// Observation's view of the property, when the model declares `Observable` (see ``ObservationBridge``).
  @usableFromInline var observation: ObservationHook?

  @usableFromInline
  nonisolated init(_ state: State) {
    currentState = state
  }

  deinit {
    tracker.task?.cancel()
  }

  @inlinable
  func store(_ state: State) {
    if let observation {
      observation.withMutation { storeAndNotify(state) }
    } else {
      storeAndNotify(state)
    }
  }

  @inlinable
  func storeAndNotify(_ state: State) {
    switch (ownObservers, modelLink) {
    case (nil, nil):
      currentState = state
    case (let link?, nil), (nil, let link?):
      currentState = state
      deliverInOrder(state, through: link)
    case (let own?, let model?):
      // Both snapshots first: an observer of one registry that registers with the other does not see this change.
      let recipients = ChangeRecipients(first: own.snapshot(for: state), second: model.snapshot(for: state))
      currentState = state
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
    observation = ObservationBridge.hook(for: model, keyPath: keyPath)
  }

  /// The state, read through the model that contains the wrapper (linking the two on first access).
  @inlinable
  func state<Model: AnyObject>(in model: Model, at keyPath: KeyPath<Model, State>) -> State {
    connect(to: model, keyPath: keyPath)
    observation?.access()
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
    let registry = ObserverRegistry()
    let link = SlotLink(core: registry.core, slot: registry.makeAnonymousSlot(of: State.self))
    ownRegistry = registry
    ownObservers = link
    return link
  }

  /// The current state, then every change, until the iteration ends or the storage goes away.
  @usableFromInline
  func states() -> AsyncStream<State> {
    let (stream, continuation) = AsyncStream<State>.makeStream()
    continuation.yield(currentState)
    let token = observe(onRegistryEnd: { continuation.finish() }) { state in
      continuation.yield(state)
    }
    continuation.onTermination = { _ in token.cancel() }
    return stream
  }

  /// The number of observers of the wrapper itself (for tests).
  var ownObserverCount: Int { ownRegistry?.observerCount ?? 0 }
}

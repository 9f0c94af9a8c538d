/// The shared, reference-typed storage behind a `@Loadable` or `@Process` wrapper: the state, the load that drives
/// it, the wrapper's own observers and, inside an ``ObservableModel``, the link to the model's registry.
///
/// Copies of a wrapper share one storage, like SwiftUI's `@State`. When the last copy goes away, `deinit` cancels
/// the running load (whose task holds the storage only weakly).
final class StateStorage<State: ManagedState & Sendable>: StateHost, DeliversInOrder {
  var tracker = LoadTracker()
  var delivery = DeliveryState<State>()
  private(set) var currentState: State
  /// The wrapper's own observers (`$state.observe`, `$state.states`), created on first use.
  private var ownObservers: ModelLink<State>?
  /// The enclosing model's registry and slot, once resolved.
  private var modelLink: ModelLink<State>?
  /// Whether `modelLink` was looked for (a wrapper outside a model has none).
  private var modelLinkResolved = false

  nonisolated init(_ state: State) {
    currentState = state
  }

  deinit {
    tracker.task?.cancel()
  }

  func store(_ state: State) {
    // Both snapshots first: an observer of one registry that registers with the other does not see this change.
    let recipients = ChangeRecipients(first: ownObservers?.snapshot(), second: modelLink?.snapshot())
    currentState = state
    deliverInOrder(state, to: recipients)
  }

  func loadDidEnd() {}

  /// Connects the storage to the model that contains it, the first time the model reaches it.
  func connect<Model: AnyObject>(to model: Model, keyPath: AnyKeyPath) {
    guard !modelLinkResolved else { return }
    modelLinkResolved = true
    modelLink = ModelLink.resolve(model, keyPath: keyPath)
  }

  /// Registers an observer of this state.
  func observe(
    onRegistryEnd: (@Sendable () -> Void)? = nil,
    _ onChange: @escaping @MainActor (State) -> Void
  ) -> ObservationToken {
    let link: ModelLink<State>
    if let existing = ownObservers {
      link = existing
    } else {
      let registry = ObserverRegistry()
      link = ModelLink(registry: registry, slot: registry.makeAnonymousSlot())
      ownObservers = link
    }
    return link.registry.addObserver(to: link.slot, onRegistryEnd: onRegistryEnd, onChange)
  }

  /// The current state, then every change, until the iteration ends or the storage goes away.
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
  var ownObserverCount: Int { ownObservers?.registry.observerCount ?? 0 }
}

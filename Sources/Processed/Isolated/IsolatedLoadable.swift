/// A loadable state owned by an actor of yours — a service, a server's cache, a test's fixture — rather than by the
/// main actor.
///
/// Declare it in the actor and drive it through `$name`, an ``IsolatedLoadableController``. The block, every write and
/// every observer call run on the owning actor, so blocks and observers may touch the actor's state synchronously and
/// need not be `Sendable`:
///
/// ```swift
/// actor FeedService {
///   @IsolatedLoadable var feed: LoadableState<[String]> = .absent
///   private var fetches = 0
///
///   func reload() async {
///     await $feed.load {
///       self.fetches += 1  // the actor's own state, no `await`
///       return ["post \(self.fetches)"]
///     }
///   }
/// }
/// ```
///
/// Every rule of ``Loadable`` holds: the latest load wins, `cancel()` and `reset()` stop a load at once, options,
/// interrupts, activity, observers and `states` work the same. A state belongs to the actor that first uses it through
/// a method of its controller (its first `load`, `observe`, `cancel`, …); a method called from another actor instance
/// afterwards stops the program with a message that names both, and a property (``wrappedValue``, `state`, `states`,
/// `activity`, `lastValue`) read off the owner's executor stops it through the runtime's executor check, which names the
/// owner. Before that first call — in the actor's `init`, say — ``wrappedValue`` may be read and written anywhere. The wrapper and its controller are not `Sendable`, so the compiler keeps them inside their
/// actor.
///
/// The cache faces (`$feed.load(key, in: cache)`, `refresh(key, in:)`), `loadMore` and the calm-presentation options
/// (``LoadOptions/loadingDelay``, ``LoadOptions/minimumLoadingTime``, ``LoadOptions/cancellation``) work as on the main
/// actor, with every write and observer call on the owning actor (see ``IsolatedLoadableController``).
@propertyWrapper
public struct IsolatedLoadable<Value: Sendable> {
  /// Copies share one state; when the last copy (and controller) goes, its load is cancelled and `states` end.
  @usableFromInline
  let handle: IsolatedStateHandle<LoadableState<Value>>
  @inlinable var storage: IsolatedStateStorage<LoadableState<Value>> { handle.storage }

  /// Creates the state with an initial value and the options of loads that are given none.
  ///
  /// ```swift
  /// @IsolatedLoadable(options: LoadOptions(timeout: .seconds(5))) var config: LoadableState<Config> = .absent
  /// ```
  ///
  /// - Parameters:
  ///   - wrappedValue: The initial state.
  ///   - options: The options of loads called without `options:`; `nil`: ``LoadOptions/default``.
  public init(wrappedValue: LoadableState<Value> = .absent, options: LoadOptions? = nil) {
    handle = IsolatedStateHandle(
      IsolatedStateStorage(wrappedValue, options: options, kind: "IsolatedLoadable<\(Value.self)>"))
  }

  /// The current state. Writing it cancels the current load, then notifies observers.
  ///
  /// ```swift
  /// feed = .loaded(cached)  // on the owning actor
  /// ```
  @inlinable
  public var wrappedValue: LoadableState<Value> {
    get { storage.ownedState }
    nonmutating set { storage.ownedState = newValue }
  }

  /// The controller: `$feed.load { … }`.
  @inlinable
  public var projectedValue: IsolatedLoadableController<Value> {
    IsolatedLoadableController(handle: handle)
  }
}

@available(*, unavailable, message: "an actor-owned state stays inside its actor")
extension IsolatedLoadable: Sendable {}

/// Drives an ``IsolatedLoadable`` from its owning actor: `$feed`.
///
/// The same surface as ``LoadableController``; each method takes the caller's isolation
/// (`isolation: isolated (any Actor) = #isolation`), so that the load's task, its block, its writes and the observers
/// run on the actor that owns the state:
///
/// ```swift
/// actor ConfigStore {
///   @IsolatedLoadable var config: LoadableState<[String: String]> = .absent
///
///   func refresh() {
///     $config.refresh(options: LoadOptions(timeout: .seconds(5))) { try await Self.fetch() }
///   }
///
///   static func fetch() async throws -> [String: String] { ["mode": "fast"] }
/// }
/// ```
///
/// Not `Sendable`: it cannot leave its actor.
public struct IsolatedLoadableController<Value: Sendable> {
  /// A controller kept in a variable is a handle to the state and keeps it alive, as the wrapper does.
  @usableFromInline
  let handle: IsolatedStateHandle<LoadableState<Value>>
  @inlinable var storage: IsolatedStateStorage<LoadableState<Value>> { handle.storage }

  @inlinable
  init(handle: IsolatedStateHandle<LoadableState<Value>>) {
    self.handle = handle
  }

  /// The current state.
  ///
  /// ```swift
  /// if $feed.state.isLoading { return }
  /// ```
  @inlinable
  public var state: LoadableState<Value> {
    storage.checkOwner()
    return storage.state
  }

  // MARK: Task forms

  /// Starts a load of the value `block` returns, and returns its task. The latest call wins: it cancels the load in
  /// progress, whose result is never written.
  ///
  /// ```swift
  /// $feed.load { try await api.feed() }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - priority: The priority of the load's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Returns the loaded value, or throws. Runs on the owning actor.
  /// - Returns: The load's task. Cancelling it cancels the load (the state stays as it is).
  @discardableResult
  @inlinable
  public func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Value
  ) -> Task<Void, Never> {
    if let calm = storage.calmOptions(options) {
      return storage.startCalm(
        calm, silently: silently, priority: priority, refreshing: false, isolation: isolation, block: block)
    }
    return storage.start(
      .load(returning: block), silently: silently, options: options, priority: priority, isolation: isolation)
  }

  /// Starts a load whose block writes states through `yield`, and returns its task.
  ///
  /// ```swift
  /// $feed.load { yield in
  ///   yield(.loaded(cachedPosts))
  ///   yield(.loaded(try await api.feed()))
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - priority: The priority of the load's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Writes states with `yield` (on the owning actor), or throws.
  /// - Returns: The load's task.
  @discardableResult
  @inlinable
  public func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping (_ yield: (LoadableState<Value>) -> Void) async throws -> Void
  ) -> Task<Void, Never> {
    storage.start(
      .load(yielding: block), silently: silently, options: options, priority: priority, isolation: isolation)
  }

  /// Starts a load with interrupts, and returns its task: `onInterrupt` runs on the owning actor after each
  /// accumulated delay while the load runs, as for ``LoadableController``.
  ///
  /// ```swift
  /// $feed.load(interrupts: [.seconds(10)]) {
  ///   try await api.feed()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the load's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Returns the loaded value, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  /// - Returns: The load's task.
  @discardableResult
  public func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Value,
    onInterrupt: @escaping (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    storage.start(
      IsolatedPlan.load(returning: block).interrupted(by: interrupts, onInterrupt), silently: silently,
      options: options, priority: priority, isolation: isolation)
  }

  /// Starts a yielding load with interrupts, and returns its task.
  ///
  /// ```swift
  /// $feed.load(interrupts: [.seconds(2)]) { yield in
  ///   yield(.loaded(try await api.feed()))
  /// } onInterrupt: { _ in
  ///   print("still loading…")
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the load's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Writes states with `yield`, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  /// - Returns: The load's task.
  @discardableResult
  public func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping (_ yield: (LoadableState<Value>) -> Void) async throws -> Void,
    onInterrupt: @escaping (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    storage.start(
      IsolatedPlan.load(yielding: block).interrupted(by: interrupts, onInterrupt), silently: silently,
      options: options, priority: priority, isolation: isolation)
  }

  // MARK: async forms

  /// Loads the value `block` returns and waits until the load stops: it ended, or a newer load, `cancel()` or
  /// `reset()` stopped it. Cancelling the caller cancels the load and returns once the actor has stopped it, without
  /// waiting for a block that ignores cancellation.
  ///
  /// ```swift
  /// await $feed.load { try await api.feed() }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Returns the loaded value, or throws.
  @inlinable
  public consuming func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Value
  ) async {
    if let calm = storage.calmOptions(options) {
      let task = storage.startCalm(
        calm, silently: silently, priority: nil, refreshing: false, isolation: isolation, block: block)
      _ = consume self  // waits without keeping the state alive
      await waitForMirrored(task)
      return
    }
    let load = storage.startAwaited(.load(returning: block), silently: silently, options: options, isolation: isolation)
    _ = consume self  // waits without keeping the state alive
    await load.wait(isolation: isolation)
  }

  /// Runs a yielding load and waits until it stops.
  ///
  /// ```swift
  /// await $feed.load { yield in yield(.loaded(try await api.feed())) }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Writes states with `yield`, or throws.
  @inlinable
  public consuming func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping (_ yield: (LoadableState<Value>) -> Void) async throws -> Void
  ) async {
    let load = storage.startAwaited(.load(yielding: block), silently: silently, options: options, isolation: isolation)
    _ = consume self  // waits without keeping the state alive
    await load.wait(isolation: isolation)
  }

  /// Loads with interrupts and waits until the load stops.
  ///
  /// ```swift
  /// await $feed.load(interrupts: [.seconds(5)]) {
  ///   try await api.feed()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Returns the loaded value, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  public consuming func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Value,
    onInterrupt: @escaping (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    let load = storage.startAwaited(
      IsolatedPlan.load(returning: block).interrupted(by: interrupts, onInterrupt), silently: silently,
      options: options, isolation: isolation
    )
    _ = consume self  // waits without keeping the state alive
    await load.wait(isolation: isolation)
  }

  /// Runs a yielding load with interrupts and waits until it stops.
  ///
  /// ```swift
  /// await $feed.load(interrupts: [.seconds(1)]) { yield in
  ///   yield(.loaded(try await api.feed()))
  /// } onInterrupt: { delay in
  ///   print("waited", delay)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Writes states with `yield`, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  public consuming func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping (_ yield: (LoadableState<Value>) -> Void) async throws -> Void,
    onInterrupt: @escaping (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    let load = storage.startAwaited(
      IsolatedPlan.load(yielding: block).interrupted(by: interrupts, onInterrupt), silently: silently,
      options: options, isolation: isolation
    )
    _ = consume self  // waits without keeping the state alive
    await load.wait(isolation: isolation)
  }

  // MARK: Activity and last value

  /// What the state's load is doing: its phase, its progress and the error kept beside the state.
  ///
  /// ```swift
  /// if case .retrying(let attempt) = $feed.activity.phase { log("attempt \(attempt)") }
  /// ```
  public var activity: LoadActivity {
    storage.checkOwner()
    return storage.activity
  }

  /// Calls `onChange` on the owning actor after every change of ``activity``; an unchanged activity is not delivered
  /// again.
  ///
  /// ```swift
  /// let token = $feed.observeActivity { activity in self.busy = activity.isActive }
  /// ```
  ///
  /// - Parameters:
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - onChange: Called with each new activity, on the owning actor.
  /// - Returns: The token that keeps the observer registered.
  public func observeActivity(
    isolation: isolated (any Actor) = #isolation, _ onChange: @escaping (LoadActivity) -> Void
  ) -> ObservationToken {
    storage.claim(isolation)
    return storage.observeActivity(onChange)
  }

  /// The last loaded value, also while the state is `.loading` or `.error` after it; `nil` after a reset.
  ///
  /// ```swift
  /// let shown = $feed.lastValue ?? []
  /// ```
  public var lastValue: Value? {
    storage.checkOwner()
    switch storage.state {
    case .loaded(let value): return value
    case .absent: return nil
    case .loading, .error: return LoadableState.lastValue(in: storage.keptState)?.data
    }
  }

  // MARK: Control

  /// Cancels the current load. The state stays as it is, and the load can no longer write.
  ///
  /// ```swift
  /// $feed.cancel()
  /// ```
  ///
  /// - Parameter isolation: The owning actor; the default is the caller's.
  public func cancel(isolation: isolated (any Actor) = #isolation) {
    storage.claim(isolation)
    storage.cancelLoad()
  }

  /// Cancels the current load and sets the state to `.absent`.
  ///
  /// ```swift
  /// $feed.reset()
  /// ```
  ///
  /// - Parameter isolation: The owning actor; the default is the caller's.
  public func reset(isolation: isolated (any Actor) = #isolation) {
    storage.claim(isolation)
    storage.resetState()
  }
}

@available(*, unavailable, message: "an actor-owned state's controller stays inside its actor")
extension IsolatedLoadableController: Sendable {}

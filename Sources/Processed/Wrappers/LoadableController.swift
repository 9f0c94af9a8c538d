/// The controller of a ``Loadable`` state — the value of `$numbers`.
///
/// It starts loads, cancels and resets them, and observes the state. Starting a load cancels the one running,
/// sets `.loading` (unless `silently`, or the state already is `.loading`), runs the block and writes its result:
/// `.loaded(value)` for a returned value, `.error(error)` for a thrown error. A load that was superseded, cancelled
/// or reset never writes again, even when its block ignores cancellation.
///
/// ```swift
/// @Loadable var numbers: LoadableState<[Int]>
///
/// let task: Task<Void, Never> = $numbers.load { try await api.numbers() }  // a Task; the state follows it
/// let yielding: Task<Void, Never> = $numbers.load { yield in  // several states from one load
///   yield(.loaded([1]))
///   yield(.loaded([1, 2]))
/// }
/// await $numbers.load { try await api.numbers() }  // waits for the load to end
/// $numbers.cancel()
/// $numbers.reset()  // cancels and sets .absent
/// ```
///
/// Each `load` comes in two forms. The one returning `Task<Void, Never>` starts the load and returns at once. The
/// `async` one returns when the load ends; its block inherits the caller's priority and task-local values, and
/// cancelling the caller's task, ``cancel()``, ``reset()`` or a newer load stop it. Inside an `async` function Swift
/// picks the `async` form; to get the task there, name its type:
/// `let task: Task<Void, Never> = $numbers.load { … }`.
///
/// Throw ``CancelLoadable`` from a block (or `onInterrupt`) to act as ``cancel()``, ``ResetLoadable`` to act as
/// ``reset()``. A `CancellationError` leaves the state as it is.
@MainActor
public struct LoadableController<Value: Sendable> {
  @usableFromInline
  let target: StateTarget<LoadableState<Value>>

  @usableFromInline
  init(storage: StateStorage<LoadableState<Value>>) {
    target = .storage(storage)
  }

  @usableFromInline
  init(target: StateTarget<LoadableState<Value>>) {
    self.target = target
  }

  /// The wrapper storage (for tests of the wrapper face).
  var storage: StateStorage<LoadableState<Value>> { target.storage }

  /// The current state.
  @inlinable
  public var state: LoadableState<Value> { target.currentState }

  // MARK: Task forms

  /// Starts a load that writes the value `block` returns, and returns its task.
  ///
  /// ```swift
  /// $numbers.load { try await api.numbers() }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first (a refresh that keeps showing content).
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - priority: The priority of the load's task.
  ///   - block: Returns the loaded value, or throws.
  /// - Returns: The load's task. Cancelling it cancels the load (the state stays as it is).
  @discardableResult
  @inlinable
  public func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    target.start(.load(returning: block), silently: silently, options: options, priority: priority)
  }

  /// Starts a load whose block writes states through `yield`, and returns its task.
  ///
  /// Returning from the block writes nothing more.
  ///
  /// ```swift
  /// $numbers.load { yield in
  ///   for try await page in api.pages() { yield(.loaded(page)) }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - priority: The priority of the load's task.
  ///   - block: Writes states with `yield`, or throws.
  /// - Returns: The load's task.
  @discardableResult
  @inlinable
  public func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    block: @escaping @MainActor (_ yield: (LoadableState<Value>) -> Void) async throws -> Void
  ) -> Task<Void, Never> {
    target.start(.load(yielding: block), silently: silently, options: options, priority: priority)
  }

  /// Starts a load with interrupts, and returns its task.
  ///
  /// `onInterrupt` is called after each delay in `interrupts`; the delays accumulate, so `[.seconds(1), .seconds(2)]`
  /// calls it at 1 s and 3 s with `accumulatedDelay` 1 s and 3 s. A zero or negative delay fires at once and adds
  /// nothing; a delay too long to schedule (beyond `.seconds(Int64.max)`) is capped there, so it never fires in
  /// practice. Interrupts stop when the load ends. An error thrown from `onInterrupt` ends the load like one thrown
  /// from the block — a timeout:
  ///
  /// ```swift
  /// $numbers.load(interrupts: [.seconds(10)]) {
  ///   try await api.numbers()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()  // .error(TimeoutError())
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the load's task.
  ///   - block: Returns the loaded value, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  /// - Returns: The load's task.
  @discardableResult
  public func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    priority: TaskPriority? = nil,
    block: @escaping @MainActor () async throws -> Value,
    onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    target.start(
      .load(returning: block).interrupted(by: interrupts, onInterrupt), silently: silently, options: options,
      priority: priority)
  }

  /// Starts a yielding load with interrupts, and returns its task. Interrupts work as for the returning form
  /// above: the delays accumulate, and an error thrown from `onInterrupt` ends the load like one from the block.
  ///
  /// ```swift
  /// $numbers.load(interrupts: [.seconds(2)]) { yield in
  ///   yield(.loaded(try await api.cached()))
  ///   yield(.loaded(try await api.fresh()))
  /// } onInterrupt: { _ in
  ///   print("still loading…")
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the load's task.
  ///   - block: Writes states with `yield`, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  /// - Returns: The load's task.
  @discardableResult
  public func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    priority: TaskPriority? = nil,
    block: @escaping @MainActor (_ yield: (LoadableState<Value>) -> Void) async throws -> Void,
    onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    target.start(
      .load(yielding: block).interrupted(by: interrupts, onInterrupt), silently: silently, options: options,
      priority: priority)
  }

  // MARK: async forms

  /// Loads the value `block` returns and waits until the load ends.
  ///
  /// ```swift
  /// await $numbers.load { try await api.numbers() }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - block: Returns the loaded value, or throws.
  @inlinable
  public consuming func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    block: @escaping @MainActor () async throws -> Value
  ) async {
    let load = target.startAwaited(.load(returning: block), silently: silently, options: options)
    _ = consume self  // wait without holding the state (see `StateHost.startAwaited`)
    await load.wait()
  }

  /// Runs a yielding load and waits until it ends.
  ///
  /// ```swift
  /// await $numbers.load { yield in yield(.loaded([1])) }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - block: Writes states with `yield`, or throws.
  @inlinable
  public consuming func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    block: @escaping @MainActor (_ yield: (LoadableState<Value>) -> Void) async throws -> Void
  ) async {
    let load = target.startAwaited(.load(yielding: block), silently: silently, options: options)
    _ = consume self  // wait without holding the state (see `StateHost.startAwaited`)
    await load.wait()
  }

  /// Loads with interrupts and waits until the load ends.
  ///
  /// ```swift
  /// await $numbers.load(interrupts: [.seconds(5)]) {
  ///   try await api.numbers()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - block: Returns the loaded value, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  public consuming func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    block: @escaping @MainActor () async throws -> Value,
    onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    let load = target.startAwaited(
      .load(returning: block).interrupted(by: interrupts, onInterrupt), silently: silently, options: options)
    _ = consume self  // wait without holding the state (see `StateHost.startAwaited`)
    await load.wait()
  }

  /// Runs a yielding load with interrupts and waits until it ends.
  ///
  /// ```swift
  /// await $numbers.load(interrupts: [.seconds(1)]) { yield in
  ///   yield(.loaded(try await api.numbers()))
  /// } onInterrupt: { delay in
  ///   print("waited", delay)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - block: Writes states with `yield`, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  public consuming func load(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    block: @escaping @MainActor (_ yield: (LoadableState<Value>) -> Void) async throws -> Void,
    onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    let load = target.startAwaited(
      .load(yielding: block).interrupted(by: interrupts, onInterrupt), silently: silently, options: options)
    _ = consume self  // wait without holding the state (see `StateHost.startAwaited`)
    await load.wait()
  }

  // MARK: Activity and last value

  /// What the state's load is doing: its phase, its progress and the error kept beside the state.
  ///
  /// ```swift
  /// if case .retrying(let attempt) = $feed.activity.phase { status = "retrying (attempt \(attempt))" }
  /// ```
  public var activity: LoadActivity { target.activity }

  /// Calls `onChange` after every change of ``activity``, synchronously, on the main actor — with the delivery rules
  /// of ``observe(_:)``. An unchanged activity is not delivered again.
  ///
  /// ```swift
  /// let token = $feed.observeActivity { activity in
  ///   spinner.isHidden = !activity.isActive
  /// }
  /// ```
  ///
  /// - Parameter onChange: Called with each new activity.
  /// - Returns: A token; the observation lasts until it is cancelled or released.
  public func observeActivity(_ onChange: @escaping @MainActor (LoadActivity) -> Void) -> ObservationToken {
    target.observeActivity(onChange)
  }

  /// The value of the last `.loaded` state, kept through later `.loading` and `.error` states, so a screen can keep
  /// showing content under a spinner or an error; `nil` once the state becomes `.absent`.
  ///
  /// ```swift
  /// if let feed = $feed.lastValue { list.show(feed) }
  /// if $feed.activity.isActive { spinner.show() }
  /// ```
  public var lastValue: Value? {
    switch target.currentState {
    case .loaded(let value): return value
    // Also when a key-path state became `.absent` through a write the library did not see.
    case .absent: return nil
    case .loading, .error:
      if case .loaded(let value)? = target.lastValueState { return value }
      return nil
    }
  }

  // MARK: Control

  /// Cancels the running load, if any. The state stays as it is; the load never writes again.
  ///
  /// ```swift
  /// $numbers.cancel()
  /// ```
  public func cancel() {
    target.cancelLoad()
  }

  /// Cancels the running load, if any, and sets the state to `.absent` (writing nothing if it already is).
  ///
  /// ```swift
  /// $numbers.reset()
  /// ```
  public func reset() {
    target.resetState()
  }

  // MARK: Observation

  /// Calls `onChange` after every change of the state, synchronously, on the main actor.
  ///
  /// ```swift
  /// var history: [LoadableState<[Int]>] = []
  /// let token = $numbers.observe { history.append($0) }
  /// ```
  ///
  /// - Parameter onChange: Called with each new state.
  /// - Returns: A token; the observation lasts until it is cancelled or released.
  @inlinable
  public func observe(_ onChange: @escaping @MainActor (LoadableState<Value>) -> Void) -> ObservationToken {
    target.observe(onChange)
  }

  /// The current state, then every change, in order. The sequence ends when the iteration is cancelled or the
  /// state's owner goes away (for a key-path state of a class that is not an ``ObservableModel``, within a second).
  ///
  /// ```swift
  /// for await state in $numbers.states {
  ///   if state.isLoaded { break }
  /// }
  /// ```
  public var states: AsyncStream<LoadableState<Value>> {
    target.states()
  }
}

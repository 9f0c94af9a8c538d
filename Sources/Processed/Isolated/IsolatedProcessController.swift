/// Drives an ``IsolatedProcess`` from its owning actor: `$upload`.
///
/// The same surface as ``ProcessController``; each method takes the caller's isolation, so the run's task, its block,
/// its writes and the observers run on the actor that owns the state:
///
/// ```swift
/// actor Jobs {
///   enum Job: Equatable, Sendable { case sync, purge }
///   @IsolatedProcess var job: ProcessState<Job> = .idle
///
///   func purge() { $job.run(.purge) { try await Task.sleep(for: .milliseconds(1)) } }
/// }
/// ```
///
/// Not `Sendable`: it cannot leave its actor.
public struct IsolatedProcessController<ProcessKind: Equatable & Sendable> {
  /// A controller kept in a variable is a handle to the state and keeps it alive, as the wrapper does.
  @usableFromInline
  let handle: IsolatedStateHandle<ProcessState<ProcessKind>>
  @inlinable var storage: IsolatedStateStorage<ProcessState<ProcessKind>> { handle.storage }

  @inlinable
  init(handle: IsolatedStateHandle<ProcessState<ProcessKind>>) {
    self.handle = handle
  }

  /// The current state.
  ///
  /// ```swift
  /// if $job.state.isRunning { return }
  /// ```
  @inlinable
  public var state: ProcessState<ProcessKind> {
    storage.checkOwner()
    return storage.state
  }

  // MARK: Task forms

  /// Runs `process` and returns its task. The latest call wins.
  ///
  /// ```swift
  /// $job.run(.sync) { try await api.sync() }
  /// ```
  ///
  /// - Parameters:
  ///   - process: The process that runs; the state becomes `.running(process)`.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's.
  ///   - priority: The priority of the run's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: The work, on the owning actor; returning finishes the process, throwing fails it.
  /// - Returns: The run's task. Cancelling it cancels the run (the state stays as it is).
  @discardableResult
  @inlinable
  public func run(
    _ process: ProcessKind,
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Void
  ) -> Task<Void, Never> {
    storage.start(
      .run(process, block), silently: silently, options: options, priority: priority, isolation: isolation)
  }

  /// Runs `process` with interrupts and returns its task; `onInterrupt` runs on the owning actor.
  ///
  /// ```swift
  /// $job.run(.sync, interrupts: [.seconds(10)]) {
  ///   try await api.sync()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - process: The process that runs.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the run's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: The work.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the run.
  /// - Returns: The run's task.
  @discardableResult
  public func run(
    _ process: ProcessKind,
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Void,
    onInterrupt: @escaping (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    storage.start(
      IsolatedPlan.run(process, block).interrupted(by: interrupts, onInterrupt), silently: silently,
      options: options, priority: priority, isolation: isolation)
  }

  // MARK: async forms

  /// Runs `process` and waits until the run stops: it ended, or a newer run, `cancel()` or `reset()` stopped it.
  /// Cancelling the caller cancels the run and returns once the actor has stopped it, without waiting for a block
  /// that ignores cancellation.
  ///
  /// ```swift
  /// await $job.run(.sync) { try await api.sync() }
  /// ```
  ///
  /// - Parameters:
  ///   - process: The process that runs.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: The work.
  @inlinable
  public consuming func run(
    _ process: ProcessKind,
    silently: Bool = false,
    options: LoadOptions? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Void
  ) async {
    let load = storage.startAwaited(.run(process, block), silently: silently, options: options, isolation: isolation)
    _ = consume self  // waits without keeping the state alive
    await load.wait(isolation: isolation)
  }

  /// Runs `process` with interrupts and waits until the run stops.
  ///
  /// ```swift
  /// await $job.run(.sync, interrupts: [.seconds(5)]) {
  ///   try await api.sync()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - process: The process that runs.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: The work.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the run.
  public consuming func run(
    _ process: ProcessKind,
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Void,
    onInterrupt: @escaping (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    let load = storage.startAwaited(
      IsolatedPlan.run(process, block).interrupted(by: interrupts, onInterrupt), silently: silently,
      options: options, isolation: isolation
    )
    _ = consume self  // waits without keeping the state alive
    await load.wait(isolation: isolation)
  }

  // MARK: Activity

  /// What the state's run is doing: its phase, its progress and the error kept beside the state.
  ///
  /// ```swift
  /// if $job.activity.isActive { return }
  /// ```
  public var activity: LoadActivity {
    storage.checkOwner()
    return storage.activity
  }

  /// Calls `onChange` on the owning actor after every change of ``activity``.
  ///
  /// ```swift
  /// let token = $job.observeActivity { activity in self.busy = activity.isActive }
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

  // MARK: Control

  /// Cancels the current run. The state stays as it is, and the run can no longer write.
  ///
  /// ```swift
  /// $job.cancel()
  /// ```
  ///
  /// - Parameter isolation: The owning actor; the default is the caller's.
  public func cancel(isolation: isolated (any Actor) = #isolation) {
    storage.claim(isolation)
    storage.cancelLoad()
  }

  /// Cancels the current run and sets the state to `.idle`.
  ///
  /// ```swift
  /// $job.reset()
  /// ```
  ///
  /// - Parameter isolation: The owning actor; the default is the caller's.
  public func reset(isolation: isolated (any Actor) = #isolation) {
    storage.claim(isolation)
    storage.resetState()
  }

  // MARK: Observation

  /// Calls `onChange` synchronously on the owning actor after every change of the state.
  ///
  /// ```swift
  /// let token = $job.observe { state in self.history.append(state) }
  /// ```
  ///
  /// - Parameters:
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - onChange: Called with each new state, on the owning actor.
  /// - Returns: The token that keeps the observer registered.
  public func observe(
    isolation: isolated (any Actor) = #isolation, _ onChange: @escaping (ProcessState<ProcessKind>) -> Void
  ) -> ObservationToken {
    storage.claim(isolation)
    return storage.observe(onChange)
  }

  /// The current state, then every later change, in order.
  ///
  /// ```swift
  /// for await state in $job.states { if state.hasFinished(.sync) { break } }
  /// ```
  public var states: AsyncStream<ProcessState<ProcessKind>> {
    storage.checkOwner()
    return storage.states()
  }
}

extension IsolatedProcessController where ProcessKind == SingleProcess {
  /// Runs the process and returns its task.
  ///
  /// ```swift
  /// $save.run { try await api.save() }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's.
  ///   - priority: The priority of the run's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: The work.
  /// - Returns: The run's task.
  @discardableResult
  public func run(
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Void
  ) -> Task<Void, Never> {
    run(SingleProcess(), silently: silently, options: options, priority: priority, isolation: isolation, block: block)
  }

  /// Runs the process with interrupts and returns its task.
  ///
  /// ```swift
  /// $save.run(interrupts: [.seconds(10)]) { try await api.save() } onInterrupt: { _ in throw TimeoutError() }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the run's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: The work.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the run.
  /// - Returns: The run's task.
  @discardableResult
  public func run(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Void,
    onInterrupt: @escaping (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    run(
      SingleProcess(), silently: silently, options: options, interrupts: interrupts, priority: priority,
      isolation: isolation, block: block, onInterrupt: onInterrupt)
  }

  /// Runs the process and waits until the run stops.
  ///
  /// ```swift
  /// await $save.run { try await api.save() }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: The work.
  public consuming func run(
    silently: Bool = false,
    options: LoadOptions? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Void
  ) async {
    await run(SingleProcess(), silently: silently, options: options, isolation: isolation, block: block)
  }

  /// Runs the process with interrupts and waits until the run stops.
  ///
  /// ```swift
  /// await $save.run(interrupts: [.seconds(5)]) { try await api.save() } onInterrupt: { _ in throw TimeoutError() }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: The work.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the run.
  public consuming func run(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Void,
    onInterrupt: @escaping (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    await run(
      SingleProcess(), silently: silently, options: options, interrupts: interrupts, isolation: isolation,
      block: block, onInterrupt: onInterrupt)
  }
}

@available(*, unavailable, message: "an actor-owned state's controller stays inside its actor")
extension IsolatedProcessController: Sendable {}

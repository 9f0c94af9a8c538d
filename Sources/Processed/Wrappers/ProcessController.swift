/// The controller of a ``Process`` state — the value of `$action`.
///
/// Running a process cancels the one running, sets `.running(process)` (unless `silently`, or the state already is
/// exactly that), runs the block and writes `.finished(process)` when it returns or `.failed(process:error:)` when
/// it throws. A run that was superseded, cancelled or reset never writes again, even when its block ignores
/// cancellation.
///
/// ```swift
/// @Process var action: ProcessState<Action>
/// @Process var upload
///
/// let saving: Task<Void, Never> = $action.run(.save) { try await api.save() }
/// let uploading: Task<Void, Never> = $upload.run { try await api.upload() }  // SingleProcess
/// await $action.run(.delete) { try await api.delete() }
/// $action.cancel()
/// $action.reset()  // cancels and sets .idle
/// ```
///
/// As with ``LoadableController``, every `run` has a Task-returning form and an `async` form that returns when the
/// run ends; inside an `async` function Swift picks the `async` one, so name the type to get the task:
/// `let task: Task<Void, Never> = $action.run(.save) { … }`. Throw ``CancelProcess`` to act as ``cancel()`` and
/// ``ResetProcess`` to act as ``reset()``.
@MainActor
public struct ProcessController<ProcessKind: Equatable & Sendable> {
  @usableFromInline
  let target: StateTarget<ProcessState<ProcessKind>>

  @usableFromInline
  init(storage: StateStorage<ProcessState<ProcessKind>>) {
    target = .storage(storage)
  }

  @usableFromInline
  init(target: StateTarget<ProcessState<ProcessKind>>) {
    self.target = target
  }

  /// The wrapper storage (for tests of the wrapper face).
  var storage: StateStorage<ProcessState<ProcessKind>> { target.storage }

  /// The current state.
  @inlinable
  public var state: ProcessState<ProcessKind> { target.currentState }

  // MARK: Task forms

  /// Runs `process` and returns its task.
  ///
  /// ```swift
  /// $action.run(.save) { try await api.save() }
  /// ```
  ///
  /// - Parameters:
  ///   - process: The process that runs; the state becomes `.running(process)`.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's (`@Process(options:)`).
  ///   - priority: The priority of the run's task.
  ///   - block: The work; returning finishes the process, throwing fails it.
  /// - Returns: The run's task. Cancelling it cancels the run (the state stays as it is).
  @discardableResult
  @inlinable
  public func run(
    _ process: ProcessKind,
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    block: @escaping @MainActor () async throws -> Void
  ) -> Task<Void, Never> {
    target.start(.run(process, block), silently: silently, options: options, priority: priority)
  }

  /// Runs `process` with interrupts and returns its task. Interrupts work as for
  /// ``LoadableController``: the delays accumulate, zero or negative ones fire at once, an error thrown from
  /// `onInterrupt` ends the run.
  ///
  /// ```swift
  /// $action.run(.save, interrupts: [.seconds(10)]) {
  ///   try await api.save()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - process: The process that runs.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's (`@Process(options:)`).
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the run's task.
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
    block: @escaping @MainActor () async throws -> Void,
    onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    target.start(
      .run(process, block).interrupted(by: interrupts, onInterrupt), silently: silently, options: options,
      priority: priority)
  }

  // MARK: async forms

  /// Runs `process` and waits until the run ends.
  ///
  /// ```swift
  /// await $action.run(.save) { try await api.save() }
  /// ```
  ///
  /// - Parameters:
  ///   - process: The process that runs.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's (`@Process(options:)`).
  ///   - block: The work.
  @inlinable
  public consuming func run(
    _ process: ProcessKind,
    silently: Bool = false,
    options: LoadOptions? = nil,
    block: @escaping @MainActor () async throws -> Void
  ) async {
    let load = target.startAwaited(.run(process, block), silently: silently, options: options)
    _ = consume self  // wait without holding the state (see `StateHost.startAwaited`)
    await load.wait()
  }

  /// Runs `process` with interrupts and waits until the run ends.
  ///
  /// ```swift
  /// await $action.run(.save, interrupts: [.seconds(10)]) {
  ///   try await api.save()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - process: The process that runs.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's (`@Process(options:)`).
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - block: The work.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the run.
  public consuming func run(
    _ process: ProcessKind,
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    block: @escaping @MainActor () async throws -> Void,
    onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    let load = target.startAwaited(
      .run(process, block).interrupted(by: interrupts, onInterrupt), silently: silently, options: options)
    _ = consume self  // wait without holding the state (see `StateHost.startAwaited`)
    await load.wait()
  }

  // MARK: Activity

  /// What the process's run is doing: its phase, its progress and the error kept beside the state.
  ///
  /// ```swift
  /// uploadBar.value = $upload.activity.progress?.fraction ?? 0
  /// ```
  public var activity: LoadActivity { target.activity }

  /// Calls `onChange` after every change of ``activity``, synchronously, on the main actor — with the delivery rules
  /// of ``observe(_:)``. An unchanged activity is not delivered again.
  ///
  /// ```swift
  /// let token = $upload.observeActivity { activity in
  ///   uploadBar.value = activity.progress?.fraction ?? 0
  /// }
  /// ```
  ///
  /// - Parameter onChange: Called with each new activity.
  /// - Returns: A token; the observation lasts until it is cancelled or released.
  public func observeActivity(_ onChange: @escaping @MainActor (LoadActivity) -> Void) -> ObservationToken {
    target.observeActivity(onChange)
  }

  // MARK: Control

  /// Cancels the running process, if any. The state stays as it is; the run never writes again.
  ///
  /// ```swift
  /// $action.cancel()
  /// ```
  public func cancel() {
    target.cancelLoad()
  }

  /// Cancels the running process, if any, and sets the state to `.idle` (writing nothing if it already is).
  ///
  /// ```swift
  /// $action.reset()
  /// ```
  public func reset() {
    target.resetState()
  }

  // MARK: Observation

  /// Calls `onChange` after every change of the state, synchronously, on the main actor.
  ///
  /// ```swift
  /// let token = $action.observe { print($0) }
  /// ```
  ///
  /// - Parameter onChange: Called with each new state.
  /// - Returns: A token; the observation lasts until it is cancelled or released.
  @inlinable
  public func observe(_ onChange: @escaping @MainActor (ProcessState<ProcessKind>) -> Void) -> ObservationToken {
    target.observe(onChange)
  }

  /// The current state, then every change, in order. The sequence ends when the iteration is cancelled or the
  /// state's owner goes away (for a key-path state of a class that is not an ``ObservableModel``, within a second).
  ///
  /// ```swift
  /// for await state in $action.states where state.hasFinished { break }
  /// ```
  public var states: AsyncStream<ProcessState<ProcessKind>> {
    target.states()
  }
}

extension ProcessController where ProcessKind == SingleProcess {
  /// Runs a new ``SingleProcess`` and returns its task.
  ///
  /// ```swift
  /// @Process var upload
  /// $upload.run { try await api.upload() }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's (`@Process(options:)`).
  ///   - priority: The priority of the run's task.
  ///   - block: The work.
  /// - Returns: The run's task.
  @discardableResult
  public func run(
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    block: @escaping @MainActor () async throws -> Void
  ) -> Task<Void, Never> {
    run(SingleProcess(), silently: silently, options: options, priority: priority, block: block)
  }

  /// Runs a new ``SingleProcess`` with interrupts and returns its task.
  ///
  /// ```swift
  /// $upload.run(interrupts: [.seconds(30)]) {
  ///   try await api.upload()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's (`@Process(options:)`).
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the run's task.
  ///   - block: The work.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the run.
  /// - Returns: The run's task.
  @discardableResult
  public func run(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    priority: TaskPriority? = nil,
    block: @escaping @MainActor () async throws -> Void,
    onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    run(
      SingleProcess(), silently: silently, options: options, interrupts: interrupts, priority: priority, block: block,
      onInterrupt: onInterrupt)
  }

  /// Runs a new ``SingleProcess`` and waits until the run ends.
  ///
  /// ```swift
  /// await $upload.run { try await api.upload() }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's (`@Process(options:)`).
  ///   - block: The work.
  public consuming func run(
    silently: Bool = false, options: LoadOptions? = nil, block: @escaping @MainActor () async throws -> Void
  ) async {
    await (consume self).run(SingleProcess(), silently: silently, options: options, block: block)
  }

  /// Runs a new ``SingleProcess`` with interrupts and waits until the run ends.
  ///
  /// ```swift
  /// await $upload.run(interrupts: [.seconds(30)]) {
  ///   try await api.upload()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: the declaration's (`@Process(options:)`).
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - block: The work.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the run.
  public consuming func run(
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    block: @escaping @MainActor () async throws -> Void,
    onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    await (consume self).run(
      SingleProcess(), silently: silently, options: options, interrupts: interrupts, block: block,
      onInterrupt: onInterrupt)
  }
}

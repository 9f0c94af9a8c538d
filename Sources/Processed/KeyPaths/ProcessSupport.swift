/// Runs ``ProcessState`` properties of a class by key path: `run(\.action, as: .save) { … }`.
///
/// The process counterpart of ``LoadableSupport``, with the same engine and the same guarantees: a new run cancels
/// the running one of the same state, `.running(process)` is set unless `silently`, `.finished(process)` or
/// `.failed(process:error:)` is written only while the run is still current, and ``CancelProcess``/``ResetProcess``
/// act as `cancel`/`reset`. No stored property is required. When the property is itself a `@Process`, these calls
/// drive the wrapper's own state, so `run(\.action, as:)`, `$action.cancel()` and `action = .idle` are one state.
///
/// > Important: As with ``LoadableSupport``, address a state a subclass inherits through the class that declares
/// > it (`(self as Base).run(\.action, as: .save) { … }`): key paths with different roots are different keys.
///
/// ```swift
/// @MainActor
/// final class EditorViewModel: ProcessSupport {
///   enum Action: Equatable, Sendable { case save, delete }
///
///   var action: ProcessState<Action> = .idle
///   var upload: SingleProcessState = .idle
///
///   func save() {
///     run(\.action, as: .save) { try await persist() }
///   }
///
///   func startUpload() {
///     run(\.upload) { try await persist() }
///   }
///
///   func persist() async throws {}
/// }
/// ```
///
/// > Note: The `run` calls take their key path as an `@autoclosure`: pass it exactly as you would a
/// > plain key path (`\.numbers`, or a variable). It is evaluated when the call starts (twice, which for a key path
/// > is free). That lets the compiler turn the load's writes into plain property accesses when the key path is a
/// > literal at the call.
///
/// > Note: When the key path is a stored property of the class (no `didSet`, not computed, not a property
/// > wrapper) that no subclass can override (the class or the property is `final`), a run writes it in place
/// > after its first write, without the dynamic exclusivity check a key-path write makes — as for a property
/// > declared `@exclusivity(unchecked)`. Every other property keeps being written through its key path, with its
/// > accessors run for every change.
public protocol ProcessSupport: AnyObject {}

extension ProcessSupport {
  // MARK: Task forms

  /// Runs `process` on the state at `state` and returns its task.
  ///
  /// ```swift
  /// run(\.action, as: .save) { try await persist() }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - process: The process that runs; the state becomes `.running(process)`.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: `.default`, or a `@Process` property's declaration options.
  ///   - priority: The priority of the run's task.
  ///   - block: The work; returning finishes the process, throwing fails it.
  /// - Returns: The run's task.
  @MainActor
  @discardableResult
  @inlinable @inline(__always)
  public func run<ProcessKind: Equatable & Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, ProcessState<ProcessKind>>,
    as process: ProcessKind,
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Void
  ) -> Task<Void, Never> {
    KeyPathHost.start(
      self, state(), KeyPathAccess(state()), .run(process, block), silently: silently, options: options,
      priority: priority)
  }

  /// Runs `process` with interrupts and returns its task.
  ///
  /// ```swift
  /// run(\.action, as: .save, interrupts: [.seconds(10)]) {
  ///   try await persist()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - process: The process that runs.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: `.default`, or a `@Process` property's declaration options.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the run's task.
  ///   - block: The work.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the run.
  /// - Returns: The run's task.
  @MainActor
  @discardableResult
  @inlinable @inline(__always)
  public func run<ProcessKind: Equatable & Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, ProcessState<ProcessKind>>,
    as process: ProcessKind,
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Void,
    @_implicitSelfCapture onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    KeyPathHost.start(
      self, state(), KeyPathAccess(state()), .run(process, block).interrupted(by: interrupts, onInterrupt),
      silently: silently, options: options,
      priority: priority
    )
  }

  /// Runs a new ``SingleProcess`` on the state at `state` and returns its task.
  ///
  /// ```swift
  /// run(\.upload) { try await persist() }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: `.default`, or a `@Process` property's declaration options.
  ///   - priority: The priority of the run's task.
  ///   - block: The work.
  /// - Returns: The run's task.
  @MainActor
  @discardableResult
  @inlinable @inline(__always)
  public func run(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, SingleProcessState>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Void
  ) -> Task<Void, Never> {
    run(state(), as: SingleProcess(), silently: silently, options: options, priority: priority, block: block)
  }

  /// Runs a new ``SingleProcess`` with interrupts and returns its task.
  ///
  /// ```swift
  /// run(\.upload, interrupts: [.seconds(30)]) {
  ///   try await persist()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: `.default`, or a `@Process` property's declaration options.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the run's task.
  ///   - block: The work.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the run.
  /// - Returns: The run's task.
  @MainActor
  @discardableResult
  @inlinable @inline(__always)
  public func run(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, SingleProcessState>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Void,
    @_implicitSelfCapture onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    run(
      state(), as: SingleProcess(), silently: silently, options: options, interrupts: interrupts, priority: priority,
      block: block,
      onInterrupt: onInterrupt)
  }

  // MARK: async forms

  /// Runs `process` and waits until the run ends. Cancelling the calling task, ``cancel(_:)``, ``reset(_:)`` or a
  /// newer run stop it.
  ///
  /// ```swift
  /// await run(\.action, as: .save) { try await persist() }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - process: The process that runs.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: `.default`, or a `@Process` property's declaration options.
  ///   - block: The work.
  @MainActor
  @inlinable @inline(__always)
  public func run<ProcessKind: Equatable & Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, ProcessState<ProcessKind>>,
    as process: ProcessKind,
    silently: Bool = false,
    options: LoadOptions? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Void
  ) async {
    await KeyPathHost.startAwaited(
      self, state(), KeyPathAccess(state()), .run(process, block), silently: silently, options: options
    ).wait()
  }

  /// Runs `process` with interrupts and waits until the run ends.
  ///
  /// ```swift
  /// await run(\.action, as: .save, interrupts: [.seconds(10)]) {
  ///   try await persist()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - process: The process that runs.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: `.default`, or a `@Process` property's declaration options.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - block: The work.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the run.
  @MainActor
  @inlinable @inline(__always)
  public func run<ProcessKind: Equatable & Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, ProcessState<ProcessKind>>,
    as process: ProcessKind,
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Void,
    @_implicitSelfCapture onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    await KeyPathHost.startAwaited(
      self, state(), KeyPathAccess(state()), .run(process, block).interrupted(by: interrupts, onInterrupt),
      silently: silently, options: options
    ).wait()
  }

  /// Runs a new ``SingleProcess`` and waits until the run ends.
  ///
  /// ```swift
  /// await run(\.upload) { try await persist() }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: `.default`, or a `@Process` property's declaration options.
  ///   - block: The work.
  @MainActor
  @inlinable @inline(__always)
  public func run(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, SingleProcessState>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Void
  ) async {
    await run(state(), as: SingleProcess(), silently: silently, options: options, block: block)
  }

  /// Runs a new ``SingleProcess`` with interrupts and waits until the run ends.
  ///
  /// ```swift
  /// await run(\.upload, interrupts: [.seconds(30)]) {
  ///   try await persist()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.running` first.
  ///   - options: The run's options; `nil`: `.default`, or a `@Process` property's declaration options.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - block: The work.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the run.
  @MainActor
  @inlinable @inline(__always)
  public func run(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, SingleProcessState>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Void,
    @_implicitSelfCapture onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    await run(
      state(), as: SingleProcess(), silently: silently, options: options, interrupts: interrupts, block: block,
      onInterrupt: onInterrupt)
  }

  // MARK: Control

  /// Cancels the running process of the state at `state`, if any. The state stays as it is.
  ///
  /// ```swift
  /// cancel(\.action)
  /// ```
  ///
  /// - Parameter state: The key path of the state.
  @MainActor
  public func cancel<ProcessKind: Equatable & Sendable>(
    _ state: ReferenceWritableKeyPath<Self, ProcessState<ProcessKind>>
  ) {
    KeyPathHost.cancel(self, state)
  }

  /// Cancels the running process of the state at `state`, if any, and sets it to `.idle` (writing nothing if it
  /// already is).
  ///
  /// ```swift
  /// reset(\.action)
  /// ```
  ///
  /// - Parameter state: The key path of the state.
  @MainActor
  public func reset<ProcessKind: Equatable & Sendable>(
    _ state: ReferenceWritableKeyPath<Self, ProcessState<ProcessKind>>
  ) {
    KeyPathHost.reset(self, state)
  }
}

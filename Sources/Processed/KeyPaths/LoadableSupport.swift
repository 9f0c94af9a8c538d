/// Loads ``LoadableState`` properties of a class by key path: `load(\.numbers) { … }`.
///
/// Adopt it in a view model, a service or any class; no stored property is required. Each call drives the state
/// at the key path exactly like a `@Loadable` controller does: a new load cancels the running one of the same
/// state, `.loading` is set unless `silently`, the result, a yielded state or an error is written only while the
/// load is still current, and ``CancelLoadable``/``ResetLoadable`` thrown from a block act as `cancel`/`reset`.
/// Loads on different properties or different instances never touch each other.
///
/// ```swift
/// @MainActor
/// final class NumbersViewModel: LoadableSupport {
///   var numbers: LoadableState<[Int]> = .absent
///
///   func refresh() {
///     load(\.numbers) {
///       try await fetchNumbers()  // no `self.` needed
///     }
///   }
///
///   func fetchNumbers() async throws -> [Int] { [1, 2, 3] }
/// }
/// ```
///
/// When the class is also an ``ObservableModel``, every change made through these calls reaches
/// `observe(\.numbers)` observers exactly once. A class that is not one still sees each write in the property's
/// `didSet`.
///
/// The instance stays alive while one of its loads runs (as with a `Task` that captures `self`) and nothing is kept
/// once its loads end.
///
/// When the property is itself a `@Loadable` (`@Loadable var numbers: LoadableState<[Int]>`), these calls drive the
/// wrapper's own state: `load(\.numbers)`, `$numbers.load`, `cancel(\.numbers)`, `$numbers.reset()` and a manual
/// write `numbers = …` are one state — the latest load wins across all of them, and every observer sees the
/// changes in the order they were made.
///
/// > Note: For a plain stored property, writing the property directly does not cancel a running key-path load;
/// > call ``cancel(_:)`` or ``reset(_:)``, or make it a `@Loadable` property, whose writes do. A key-path write
/// > delivers the value the property holds afterwards (a `didSet` may normalise it), and changes made from a
/// > `didSet` during the write are delivered after it, in order.
///
/// > Important: A state is identified by its instance and its key path, and key paths with different roots are
/// > different keys (`\Sub.numbers != \Base.numbers`; Swift has no root-independent identity for them). In a
/// > class hierarchy, address a state through the class that declares it: in subclass code write
/// > `(self as Base).load(\.numbers) { … }` and `(self as Base).cancel(\.numbers)`, and observe it with
/// > `(model as Base).observe(\.numbers)`. Final classes need no care.
///
/// > Note: The `load` and `refresh` calls take their key path as an `@autoclosure`: pass it exactly as you would a
/// > plain key path (`\.numbers`, or a variable). It is evaluated when the call starts (twice, which for a key path
/// > is free). That lets the compiler turn the load's writes into plain property accesses when the key path is a
/// > literal at the call.
///
/// > Note: When the key path is a stored property of the class (no `didSet`, not computed, not a property
/// > wrapper) that no subclass can override (the class or the property is `final`), a load writes it in place
/// > after its first write, without the dynamic exclusivity check a key-path write makes — as for a property
/// > declared `@exclusivity(unchecked)`. Every other property keeps being written through its key path, with its
/// > accessors run for every change.
public protocol LoadableSupport: AnyObject {}

extension LoadableSupport {
  // MARK: Refresh

  /// Loads the state at `state` again while keeping its loaded value on screen, and returns the load's task.
  ///
  /// From `.loaded(value)`: no `.loading` is written, success writes `.loaded(newValue)`, and an ordinary failure
  /// keeps `.loaded(value)` and puts the error in the state's activity (`loadables.numbers.activity.lastError`).
  /// From any other state it is exactly `load(_:silently:options:priority:block:)`.
  ///
  /// ```swift
  /// refresh(\.numbers) { try await fetchNumbers() }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - priority: The priority of the load's task.
  ///   - block: Returns the loaded value, or throws.
  /// - Returns: The load's task.
  @MainActor
  @discardableResult
  public func refresh<Value: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    KeyPathHost.start(
      self, state(), KeyPathAccess(state()), .load(returning: block), silently: false, options: options,
      priority: priority, refreshing: true)
  }

  /// Loads the state at `state` again while keeping its loaded value on screen, and waits until the load ends. See
  /// ``refresh(_:options:priority:block:)``.
  ///
  /// ```swift
  /// await refresh(\.numbers) { try await fetchNumbers() }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - block: Returns the loaded value, or throws.
  @MainActor
  public func refresh<Value: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    options: LoadOptions? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Value
  ) async {
    let load = KeyPathHost.startAwaited(
      self, state(), KeyPathAccess(state()), .load(returning: block), silently: false, options: options,
      refreshing: true)
    await load.wait()
  }

  // MARK: Task forms

  /// Starts a load that writes the value `block` returns to the state at `state`, and returns its task.
  ///
  /// ```swift
  /// load(\.numbers) { try await fetchNumbers() }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - priority: The priority of the load's task.
  ///   - block: Returns the loaded value, or throws.
  /// - Returns: The load's task. Cancelling it cancels the load.
  @MainActor
  @discardableResult
  @inlinable @inline(__always)
  public func load<Value: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    KeyPathHost.start(
      self, state(), KeyPathAccess(state()), .load(returning: block), silently: silently, options: options,
      priority: priority)
  }

  /// Starts a load whose block writes states through `yield`, and returns its task.
  ///
  /// ```swift
  /// load(\.numbers) { yield in
  ///   yield(.loaded(cached))
  ///   yield(.loaded(try await fetchNumbers()))
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - priority: The priority of the load's task.
  ///   - block: Writes states with `yield`, or throws.
  /// - Returns: The load's task.
  @MainActor
  @discardableResult
  @inlinable @inline(__always)
  public func load<Value: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor (_ yield: (LoadableState<Value>) -> Void) async throws -> Void
  ) -> Task<Void, Never> {
    KeyPathHost.start(
      self, state(), KeyPathAccess(state()), .load(yielding: block), silently: silently, options: options,
      priority: priority)
  }

  /// Starts a load with interrupts and returns its task. The delays accumulate; an error thrown from
  /// `onInterrupt` ends the load like one from the block.
  ///
  /// ```swift
  /// load(\.numbers, interrupts: [.seconds(10)]) {
  ///   try await fetchNumbers()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the load's task.
  ///   - block: Returns the loaded value, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  /// - Returns: The load's task.
  @MainActor
  @discardableResult
  @inlinable @inline(__always)
  public func load<Value: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Value,
    @_implicitSelfCapture onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    KeyPathHost.start(
      self, state(), KeyPathAccess(state()), .load(returning: block).interrupted(by: interrupts, onInterrupt),
      silently: silently,
      options: options,
      priority: priority)
  }

  /// Starts a yielding load with interrupts and returns its task.
  ///
  /// ```swift
  /// load(\.numbers, interrupts: [.seconds(2)]) { yield in
  ///   yield(.loaded(try await fetchNumbers()))
  /// } onInterrupt: { _ in
  ///   print("still loading")
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - priority: The priority of the load's task.
  ///   - block: Writes states with `yield`, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  /// - Returns: The load's task.
  @MainActor
  @discardableResult
  @inlinable @inline(__always)
  public func load<Value: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor (_ yield: (LoadableState<Value>) -> Void) async throws -> Void,
    @_implicitSelfCapture onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) -> Task<Void, Never> {
    KeyPathHost.start(
      self, state(), KeyPathAccess(state()), .load(yielding: block).interrupted(by: interrupts, onInterrupt),
      silently: silently,
      options: options,
      priority: priority)
  }

  // MARK: async forms

  /// Loads the value `block` returns into the state at `state` and waits until the load ends. Cancelling the
  /// calling task, ``cancel(_:)``, ``reset(_:)`` or a newer load stop it.
  ///
  /// ```swift
  /// await load(\.numbers) { try await fetchNumbers() }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - block: Returns the loaded value, or throws.
  @MainActor
  @inlinable @inline(__always)
  public func load<Value: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Value
  ) async {
    await KeyPathHost.startAwaited(
      self, state(), KeyPathAccess(state()), .load(returning: block), silently: silently, options: options
    ).wait()
  }

  /// Runs a yielding load into the state at `state` and waits until it ends.
  ///
  /// ```swift
  /// await load(\.numbers) { yield in yield(.loaded([1])) }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - block: Writes states with `yield`, or throws.
  @MainActor
  @inlinable @inline(__always)
  public func load<Value: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    @_implicitSelfCapture block: @escaping @MainActor (_ yield: (LoadableState<Value>) -> Void) async throws -> Void
  ) async {
    await KeyPathHost.startAwaited(
      self, state(), KeyPathAccess(state()), .load(yielding: block), silently: silently, options: options
    ).wait()
  }

  /// Loads with interrupts and waits until the load ends.
  ///
  /// ```swift
  /// await load(\.numbers, interrupts: [.seconds(10)]) {
  ///   try await fetchNumbers()
  /// } onInterrupt: { _ in
  ///   throw TimeoutError()
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - block: Returns the loaded value, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  @MainActor
  @inlinable @inline(__always)
  public func load<Value: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    @_implicitSelfCapture block: @escaping @MainActor () async throws -> Value,
    @_implicitSelfCapture onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    await KeyPathHost.startAwaited(
      self, state(), KeyPathAccess(state()), .load(returning: block).interrupted(by: interrupts, onInterrupt),
      silently: silently,
      options: options
    ).wait()
  }

  /// Runs a yielding load with interrupts and waits until it ends.
  ///
  /// ```swift
  /// await load(\.numbers, interrupts: [.seconds(1)]) { yield in
  ///   yield(.loaded(try await fetchNumbers()))
  /// } onInterrupt: { delay in
  ///   print("waited", delay)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - silently: When `true`, the state is not set to `.loading` first.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - interrupts: The delays between interrupts; `[]` means none.
  ///   - block: Writes states with `yield`, or throws.
  ///   - onInterrupt: Called with the accumulated delay; may write the state, or throw to end the load.
  @MainActor
  @inlinable @inline(__always)
  public func load<Value: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Value>>,
    silently: Bool = false,
    options: LoadOptions? = nil,
    interrupts: [Duration],
    @_implicitSelfCapture block: @escaping @MainActor (_ yield: (LoadableState<Value>) -> Void) async throws -> Void,
    @_implicitSelfCapture onInterrupt: @escaping @MainActor (_ accumulatedDelay: Duration) throws -> Void
  ) async {
    await KeyPathHost.startAwaited(
      self, state(), KeyPathAccess(state()), .load(yielding: block).interrupted(by: interrupts, onInterrupt),
      silently: silently, options: options
    ).wait()
  }

  // MARK: Control

  /// Cancels the running load of the state at `state`, if any. The state stays as it is.
  ///
  /// ```swift
  /// cancel(\.numbers)
  /// ```
  ///
  /// - Parameter state: The key path of the state.
  @MainActor
  public func cancel<Value: Sendable>(_ state: ReferenceWritableKeyPath<Self, LoadableState<Value>>) {
    KeyPathHost.cancel(self, state)
  }

  /// Cancels the running load of the state at `state`, if any, and sets it to `.absent` (writing nothing if it
  /// already is).
  ///
  /// ```swift
  /// reset(\.numbers)
  /// ```
  ///
  /// - Parameter state: The key path of the state.
  @MainActor
  public func reset<Value: Sendable>(_ state: ReferenceWritableKeyPath<Self, LoadableState<Value>>) {
    KeyPathHost.reset(self, state)
  }
}

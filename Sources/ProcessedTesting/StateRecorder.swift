public import Processed

/// Records every change of a state — a `@Loadable`/`@Process` controller's, or a model's property — so that a test
/// can assert the whole history, and await it without sleeping.
///
/// ```swift
/// let recorder = StateRecorder(model.$numbers)
/// model.refresh()
/// try await recorder.wait(forCount: 2)
/// #expect(recorder.values == [.loading, .loaded([1, 2, 3])])
/// ```
///
/// It records changes from its creation on (not the current state) until ``cancel()`` or until it is released.
/// ``wait(forCount:timeLimit:)`` fails with ``TimeLimitExceeded`` after a real-time limit, so a bug fails a test
/// instead of hanging it.
///
/// To record values from any other observer — a load's activity, a handler you pass to your own code — create an
/// empty recorder with ``init()`` and call ``record(_:)`` from that observer; keep the observation's token in
/// ``token`` so that it lasts as long as the recorder.
@MainActor
public final class StateRecorder<State: Sendable> {
  /// Every change recorded so far, in order.
  public private(set) var values: [State] = []

  /// The observation that feeds the recorder, kept for as long as the recorder lives.
  ///
  /// The controller and model initializers set it. Set it yourself to keep an observation that calls ``record(_:)``;
  /// setting it to another token or to `nil` releases the previous one, which ends that observation (unless it is
  /// also kept elsewhere). ``cancel()`` cancels it and sets it to `nil`.
  ///
  /// ```swift
  /// let recorder = StateRecorder<LoadableState<[String]>>()
  /// recorder.token = model.$feed.observe { [weak recorder] in recorder?.record($0) }
  /// await model.refresh().value
  /// recorder.token = nil  // records nothing more
  /// ```
  public var token: ObservationToken?
  private var waiters: [(id: UInt64, count: Int, continuation: CheckedContinuation<Void, any Error>)] = []
  private var nextID: UInt64 = 0

  /// Why ``wait(forCount:timeLimit:)`` gave up.
  public struct TimeLimitExceeded: Error, CustomStringConvertible {
    /// What was waited for, and what was recorded.
    public let description: String
  }

  /// Records the changes of a `@Loadable` state.
  ///
  /// ```swift
  /// let recorder = StateRecorder(model.$feed)
  /// ```
  ///
  /// - Parameter controller: The state's controller (`$feed`).
  public convenience init<Value>(_ controller: LoadableController<Value>) where State == LoadableState<Value> {
    self.init()
    token = controller.observe { [weak self] in self?.record($0) }
  }

  /// Records the changes of a `@Process` state.
  ///
  /// ```swift
  /// let recorder = StateRecorder(model.$save)
  /// ```
  ///
  /// - Parameter controller: The state's controller (`$save`).
  public convenience init<Kind>(_ controller: ProcessController<Kind>) where State == ProcessState<Kind> {
    self.init()
    token = controller.observe { [weak self] in self?.record($0) }
  }

  /// Records the changes of a model's property (what `model.observe(keyPath)` delivers).
  ///
  /// ```swift
  /// let recorder = StateRecorder(model, \.numbers)
  /// ```
  ///
  /// - Parameters:
  ///   - model: The model.
  ///   - keyPath: The property.
  public convenience init<Model: ObservableModel>(_ model: Model, _ keyPath: KeyPath<Model, State>) {
    self.init()
    token = model.observe(keyPath) { [weak self] in self?.record($0) }
  }

  /// Creates a recorder that observes nothing: it records exactly the values given to ``record(_:)``.
  ///
  /// Use it to record what any observer receives — a load's activity, the delays an `onInterrupt` handler is given,
  /// a callback of your own code — with the same history and waits as a controller's recorder. Keep the
  /// observation's token in ``token``, and capture the recorder weakly there: the recorder keeps the token.
  ///
  /// ```swift
  /// let activity = StateRecorder<LoadActivity>()
  /// activity.token = model.$feed.observeActivity { [weak activity] in activity?.record($0) }
  /// ```
  public init() {}

  /// Suspends until at least `count` changes were recorded. Throws ``TimeLimitExceeded`` when that has not happened
  /// after `timeLimit` of real time, and `CancellationError` when the calling task is cancelled.
  ///
  /// ```swift
  /// try await recorder.wait(forCount: 2)
  /// ```
  ///
  /// - Parameters:
  ///   - count: The number of changes to wait for.
  ///   - timeLimit: The real time after which the wait fails. Generous by default (30 s), so that a correct test
  ///     does not fail on a busy machine (a sanitizer build, a loaded CI runner).
  public func wait(forCount count: Int, timeLimit: Duration = .seconds(30)) async throws {
    if values.count >= count { return }
    nextID &+= 1
    let id = nextID
    let limit = Task { [weak self] in
      // The one real-time wait: a safety limit, never the way a test learns that something happened.
      try? await Task.sleep(for: timeLimit)
      guard let self else { return }
      self.fail(id, with: TimeLimitExceeded(description: "\(self.values.count) of \(count) changes: \(self.values)"))
    }
    defer { limit.cancel() }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        waiters.append((id, count, continuation))
      }
    } onCancel: {
      Task { @MainActor [weak self] in self?.fail(id, with: CancellationError()) }
    }
  }

  /// Stops recording. Idempotent.
  ///
  /// ```swift
  /// recorder.cancel()
  /// ```
  public func cancel() {
    token?.cancel()
    token = nil
  }

  /// Appends a value to ``values`` and resumes the waits it completes.
  ///
  /// The controller and model initializers call it for each change they observe; call it yourself on a recorder
  /// made with ``init()``.
  ///
  /// ```swift
  /// let activity = StateRecorder<LoadActivity>()
  /// activity.token = model.$feed.observeActivity { [weak activity] in activity?.record($0) }
  /// model.refresh()
  /// try await activity.wait(forCount: 2)
  /// #expect(activity.values.map(\.phase) == [.running(attempt: 1), .idle])
  /// ```
  ///
  /// - Parameter state: The value to record.
  public func record(_ state: State) {
    values.append(state)
    let count = values.count
    let ready = waiters.filter { $0.count <= count }
    waiters.removeAll { $0.count <= count }
    for waiter in ready { waiter.continuation.resume() }
  }

  private func fail(_ id: UInt64, with error: any Error) {
    guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
    waiters.remove(at: index).continuation.resume(throwing: error)
  }
}

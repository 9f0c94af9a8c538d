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
/// Its waits — for a count (``wait(forCount:timeLimit:)``), a state (``wait(for:timeLimit:)``), a whole history
/// (``wait(forHistory:timeLimit:)``) — fail with ``TimeLimitExceeded`` after a real-time limit, so a bug fails a test
/// instead of hanging it, and the error lists every change recorded.
///
/// `StateRecorder(activityOf: model.$feed)` records a load's activity and waits for its phases
/// (``wait(forPhase:timeLimit:)``). To record values from any other observer — a handler you pass to your own code —
/// create an empty recorder with ``init()`` and call ``record(_:)`` from that observer; keep the observation's token
/// in ``token`` so that it lasts as long as the recorder.
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
  private var waiters: [Waiter] = []
  private var nextID: UInt64 = 0

  /// Why a wait gave up after its time limit: what it waited for, and everything recorded until then.
  ///
  /// For example: "waited 30s for .retrying(attempt: 2); recorded 1 phase: [.running(attempt: 1)]".
  public struct TimeLimitExceeded: Error, CustomStringConvertible {
    /// What was waited for, and what was recorded.
    public let description: String
  }

  /// Why ``wait(forHistory:timeLimit:)`` (or ``wait(forPhases:timeLimit:)``) gave up at once: the recorded history
  /// went another way, so it could no longer become the expected one.
  public struct UnexpectedHistory: Error, CustomStringConvertible {
    /// The history expected, and the one recorded.
    public let description: String
  }

  /// What a wait makes of the history recorded so far.
  enum Check {
    case waiting, met
    /// The wait can never be met: it fails at once with this message.
    case impossible(String)
  }

  private struct Waiter {
    let id: UInt64
    let check: ([State]) -> Check
    let continuation: CheckedContinuation<Void, any Error>
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
    try await wait(
      expecting: "\(count) \(count == 1 ? "change" : "changes")", timeLimit: timeLimit,
      seen: { "recorded \(WaitDescription.values($0, as: "change"))" },
      check: { $0.count >= count ? .met : .waiting })
  }

  /// Suspends until a recorded value satisfies `predicate` (at any point since the recorder was made; at once when
  /// one already does). Throws ``TimeLimitExceeded`` — saying every value recorded — when none has after `timeLimit`
  /// of real time, and `CancellationError` when the calling task is cancelled.
  ///
  /// ```swift
  /// try await recorder.wait(until: { $0.data?.count == 3 })
  /// ```
  ///
  /// - Parameters:
  ///   - predicate: Whether a recorded value is the one the test waits for.
  ///   - timeLimit: The real time after which the wait fails (30 s unless given).
  public func wait(until predicate: @escaping (State) -> Bool, timeLimit: Duration = .seconds(30)) async throws {
    try await wait(
      expecting: "a change that meets the condition", timeLimit: timeLimit,
      seen: { "recorded \(WaitDescription.values($0, as: "change"))" },
      check: { $0.contains(where: predicate) ? .met : .waiting })
  }

  /// Suspends until `predicate` holds for the whole history recorded (checked now, and after each change). Throws
  /// ``TimeLimitExceeded`` — saying every value recorded — when it has not held after `timeLimit` of real time, and
  /// `CancellationError` when the calling task is cancelled.
  ///
  /// ```swift
  /// try await recorder.wait(until: { $0.count == 2 && $0.last?.isLoaded == true })
  /// ```
  ///
  /// - Parameters:
  ///   - predicate: Whether the values recorded so far, in order, are what the test waits for.
  ///   - timeLimit: The real time after which the wait fails (30 s unless given).
  public func wait(until predicate: @escaping ([State]) -> Bool, timeLimit: Duration = .seconds(30)) async throws {
    try await wait(
      expecting: "a history that meets the condition", timeLimit: timeLimit,
      seen: { "recorded \(WaitDescription.values($0, as: "change"))" },
      check: { predicate($0) ? .met : .waiting })
  }

  /// Suspends until `state` has been recorded (at any point since the recorder was made; at once when it already
  /// was). Throws ``TimeLimitExceeded`` — saying every state recorded — when that has not happened after `timeLimit` of
  /// real time, and `CancellationError` when the calling task is cancelled.
  ///
  /// ```swift
  /// model.search("swift")
  /// try await recorder.wait(for: .loading)
  /// ```
  ///
  /// A state that can be recorded more than once (`.loading` of a second load) is met by its first time; wait for a
  /// whole history with ``wait(forHistory:timeLimit:)`` instead.
  ///
  /// - Parameters:
  ///   - state: The state to wait for.
  ///   - timeLimit: The real time after which the wait fails (30 s unless given).
  public func wait(for state: State, timeLimit: Duration = .seconds(30)) async throws where State: Equatable {
    try await wait(
      expecting: String(reflecting: state), timeLimit: timeLimit,
      seen: { "recorded \(WaitDescription.values($0, as: "change"))" },
      check: { $0.contains(state) ? .met : .waiting })
  }

  /// Suspends until the recorded history is exactly `history`. Throws ``UnexpectedHistory`` at once when the
  /// recorded states go another way (they are no longer the start of `history`), ``TimeLimitExceeded`` when the
  /// history is not complete after `timeLimit` of real time — both say what was recorded — and `CancellationError`
  /// when the calling task is cancelled.
  ///
  /// ```swift
  /// model.refresh()
  /// try await recorder.wait(forHistory: [.loading, .loaded(["first post"])])
  /// ```
  ///
  /// - Parameters:
  ///   - history: Every change expected since the recorder was made, in order.
  ///   - timeLimit: The real time after which the wait fails (30 s unless given).
  public func wait(forHistory history: [State], timeLimit: Duration = .seconds(30)) async throws
  where State: Equatable {
    let expected = WaitDescription.values(history, as: "change")
    try await wait(
      expecting: "the history \(expected)", timeLimit: timeLimit,
      seen: { "recorded \(WaitDescription.values($0, as: "change"))" },
      check: { values in
        if values == history { return .met }
        if values.count < history.count, Array(history.prefix(values.count)) == values { return .waiting }
        return .impossible("expected \(expected); recorded \(WaitDescription.values(values, as: "change"))")
      })
  }

  /// Suspends until the recorder holds `check`'s answer `.met` for the values recorded; fails with
  /// ``TimeLimitExceeded`` (saying `what` was waited for and what `seen` makes of the values) after `timeLimit`, with
  /// ``UnexpectedHistory`` when `check` says the wait can no longer be met, and with `CancellationError` when the
  /// calling task is cancelled.
  func wait(
    expecting what: String, timeLimit: Duration, seen: @escaping ([State]) -> String,
    check: @escaping ([State]) -> Check
  ) async throws {
    switch check(values) {
    case .met: return
    case .impossible(let message): throw UnexpectedHistory(description: message)
    case .waiting: break
    }
    nextID &+= 1
    let id = nextID
    // The one real-time wait: a safety limit, never the way a test learns that something happened. Its task holds
    // the recorder only through `expiry`, which the wait empties when it ends: a cancelled limit still queued when
    // the process exits then holds nothing (a weak reference would keep its side table).
    let expiry = WaitExpiry()
    expiry.fire = { [self] in
      let message = "waited \(WaitDescription.duration(timeLimit)) for \(what); \(seen(self.values))"
      self.fail(id, with: TimeLimitExceeded(description: message))
    }
    let limit = Task { [expiry] in
      try? await Task.sleep(for: timeLimit)
      expiry.fire?()
    }
    defer {
      expiry.fire = nil
      limit.cancel()
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        waiters.append(Waiter(id: id, check: check, continuation: continuation))
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
    var pending: [Waiter] = []
    var done: [(Waiter, (any Error)?)] = []
    for waiter in waiters {
      switch waiter.check(values) {
      case .waiting: pending.append(waiter)
      case .met: done.append((waiter, nil))
      case .impossible(let message): done.append((waiter, UnexpectedHistory(description: message)))
      }
    }
    waiters = pending
    for (waiter, error) in done {
      if let error {
        waiter.continuation.resume(throwing: error)
      } else {
        waiter.continuation.resume()
      }
    }
  }

  private func fail(_ id: UInt64, with error: any Error) {
    guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
    waiters.remove(at: index).continuation.resume(throwing: error)
  }
}

/// What a wait's time limit does when it expires; emptied when the wait ends (see `StateRecorder.wait`).
@MainActor
private final class WaitExpiry {
  var fire: (() -> Void)?
}

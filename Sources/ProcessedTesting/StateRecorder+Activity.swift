public import Processed

/// A recorder of a load's activity: what ``LoadActivity`` a controller's `observeActivity` delivers, with waits for a
/// phase and for a history of phases — as a state recorder waits for states.
///
/// ```swift
/// let activity = StateRecorder(activityOf: model.$feed)
/// model.refresh()
/// try await activity.wait(forPhase: .retrying(attempt: 2))  // the first attempt failed
/// clock.advance(by: .seconds(2))
/// ```
extension StateRecorder where State == LoadActivity {
  /// Records the activity of a `@Loadable` state, or of a key-path state (`model.loadables.feed`).
  ///
  /// ```swift
  /// let activity = StateRecorder(activityOf: model.$feed)
  /// ```
  ///
  /// - Parameter controller: The state's controller.
  public convenience init<Value>(activityOf controller: LoadableController<Value>) {
    self.init()
    token = controller.observeActivity { [weak self] in self?.record($0) }
  }

  /// Records the activity of a `@Process` state, or of a key-path process state (`model.processes.save`).
  ///
  /// ```swift
  /// let activity = StateRecorder(activityOf: model.$save)
  /// ```
  ///
  /// - Parameter controller: The state's controller.
  public convenience init<Kind>(activityOf controller: ProcessController<Kind>) {
    self.init()
    token = controller.observeActivity { [weak self] in self?.record($0) }
  }

  /// The phases recorded, in order, each once per stretch: a change that keeps the phase (a progress report, a kept
  /// error) adds no repeat.
  ///
  /// ```swift
  /// #expect(activity.phases == [.running(attempt: 1), .retrying(attempt: 2), .running(attempt: 2), .idle])
  /// ```
  public var phases: [LoadActivity.Phase] { Self.phases(of: values) }

  /// Suspends until the load has been in `phase` (at any point since the recorder was made; at once when it already
  /// was). Throws ``StateRecorder/TimeLimitExceeded`` — saying every phase recorded — when that has not happened after
  /// `timeLimit` of real time, and `CancellationError` when the calling task is cancelled.
  ///
  /// ```swift
  /// try await activity.wait(forPhase: .retrying(attempt: 2))
  /// ```
  ///
  /// A phase met twice (`.idle` after a second load) is met by its first time; wait for a history of phases with
  /// ``wait(forPhases:timeLimit:)`` instead.
  ///
  /// - Parameters:
  ///   - phase: The phase to wait for.
  ///   - timeLimit: The real time after which the wait fails (30 s unless given).
  public func wait(forPhase phase: LoadActivity.Phase, timeLimit: Duration = .seconds(30)) async throws {
    try await wait(
      expecting: WaitDescription.phase(phase), timeLimit: timeLimit,
      seen: { "recorded \(WaitDescription.phases(Self.phases(of: $0)))" },
      check: { values in values.contains { $0.phase == phase } ? .met : .waiting })
  }

  /// Suspends until ``phases`` is exactly `history`. Throws ``StateRecorder/UnexpectedHistory`` at once when the
  /// phases go another way, ``StateRecorder/TimeLimitExceeded`` when the history is not complete after `timeLimit` of
  /// real time — both say which phases were recorded — and `CancellationError` when the calling task is cancelled.
  ///
  /// ```swift
  /// try await activity.wait(forPhases: [.debouncing, .waiting, .running(attempt: 1), .idle])
  /// ```
  ///
  /// - Parameters:
  ///   - history: Every phase expected since the recorder was made, in order, as ``phases`` lists them.
  ///   - timeLimit: The real time after which the wait fails (30 s unless given).
  public func wait(forPhases history: [LoadActivity.Phase], timeLimit: Duration = .seconds(30)) async throws {
    let expected = WaitDescription.phases(history)
    try await wait(
      expecting: "the phases \(expected)", timeLimit: timeLimit,
      seen: { "recorded \(WaitDescription.phases(Self.phases(of: $0)))" },
      check: { values in
        let phases = Self.phases(of: values)
        if phases == history { return .met }
        if phases.count < history.count, Array(history.prefix(phases.count)) == phases { return .waiting }
        return .impossible("expected \(expected); recorded \(WaitDescription.phases(phases))")
      })
  }

  private static func phases(of values: [LoadActivity]) -> [LoadActivity.Phase] {
    var phases: [LoadActivity.Phase] = []
    for activity in values where phases.last != activity.phase {
      phases.append(activity.phase)
    }
    return phases
  }
}

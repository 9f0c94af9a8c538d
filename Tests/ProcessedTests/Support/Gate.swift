import Testing

/// A one-shot gate: tasks that `wait()` suspend until someone calls `open()`. Lets a test decide exactly when a
/// load's block may go on, without sleeping.
@MainActor
final class Gate {
  private var isOpen = false
  private var waiters: [CheckedContinuation<Void, Never>] = []

  init() {}

  /// Suspends until the gate opens (returns at once if it is open). Ignores cancellation, like real network code
  /// that does not cooperate.
  func wait() async {
    if isOpen { return }
    await withCheckedContinuation { waiters.append($0) }
  }

  /// The number of tasks waiting.
  var waiting: Int { waiters.count }

  func open() {
    isOpen = true
    let pending = waiters
    waiters = []
    for waiter in pending { waiter.resume() }
  }
}

/// Suspends the main actor's caller until `condition` holds, yielding in between (fails the test after `timeout`).
@MainActor
func eventually(
  timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation,
  _ condition: @MainActor () -> Bool
) async {
  let clock = ContinuousClock()
  let deadline = clock.now + timeout
  while !condition() {
    if clock.now > deadline {
      Issue.record("condition not met in time", sourceLocation: sourceLocation)
      return
    }
    await Task.yield()
    try? await Task.sleep(for: .milliseconds(1))
  }
}

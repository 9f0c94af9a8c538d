import Processed

/// The one place the test support waits on real time: a safety limit that turns a wait which would hang (a bug) into
/// a failure. A passing test never reaches it; time that a test is about runs on `TestClock`, and a block that must
/// be slow waits on a `Gate` or until it is cancelled.
enum SafetyLimit {
  /// The limit the waits use unless they are given one.
  static let standard = Duration.seconds(30)

  /// Runs `expire` on the main actor once `limit` of real time has passed, unless the returned deadline is cancelled
  /// first (cancel it when the wait it guards ends).
  @discardableResult
  static func start(_ limit: Duration = standard, _ expire: @escaping @MainActor () -> Void) -> SafetyDeadline {
    SafetyDeadline(limit, expire)
  }

  /// Runs `body` and returns `true` when it ends, or `false` once `limit` of real time has passed first (the body then
  /// runs on; the caller reports the hang instead of hanging).
  @MainActor
  static func within(_ limit: Duration = .seconds(10), _ body: @escaping @MainActor () async -> Void) async -> Bool {
    let once = ResumedOnce()
    return await withCheckedContinuation { continuation in
      once.continuation = continuation
      let expiry = start(limit) { once.resume(false) }
      Task { @MainActor in
        await body()
        expiry.cancel()
        once.resume(true)
      }
    }
  }
}

/// A continuation resumed once, by whichever comes first.
@MainActor
private final class ResumedOnce {
  var continuation: CheckedContinuation<Bool, Never>?

  func resume(_ value: Bool) {
    continuation?.resume(returning: value)
    continuation = nil
  }
}

/// A running safety limit. Cancelling it drops its `expire` closure at once, with whatever that captured, so a closure
/// may capture its object strongly: the object lives on only until the wait ends. (Capture strongly: a weak reference
/// gives its object a side table whose pointer is stored encoded, which LeakSanitizer reports as leaked when the
/// object is still alive at exit.)
final class SafetyDeadline: Sendable {
  private let expire: LockedBox<(@MainActor () -> Void)?>
  private let task = LockedBox<Task<Void, Never>?>(nil)

  init(_ limit: Duration, _ expire: @escaping @MainActor () -> Void) {
    self.expire = LockedBox(expire)
    // Strong: a weak reference to the deadline would be the side table the deadline exists to avoid. The cycle
    // with `task` ends when the task ends or the deadline is cancelled.
    self.task.withLock {
      $0 = Task { @MainActor [self] in
        guard (try? await Task.sleep(for: limit)) != nil else { return }
        self.fire()
      }
    }
  }

  /// Stops the limit: `expire` never runs.
  func cancel() {
    _ = expire.withLock { $0.take() }
    task.withLock { $0.take() }?.cancel()
  }

  @MainActor
  private func fire() {
    expire.withLock { $0.take() }?()
  }
}

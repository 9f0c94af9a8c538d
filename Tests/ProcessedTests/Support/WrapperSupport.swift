import Testing

@testable import Processed

/// An `Equatable` error for the wrapper tests, so that histories can compare `.error(…)` and `.failed(…)` exactly.
struct WrapperError: Error, Equatable, Sendable {
  let code: Int
}

/// A one-shot value: a load's block (or a test) fulfils it once, and the test awaits it. Lets a test learn exactly
/// when something happened inside a block — that it started, or that it saw its task cancelled — without sleeping.
@MainActor
final class WrapperLatch<Value: Sendable> {
  private var result: Value?
  private var waiters: [CheckedContinuation<Value, Never>] = []

  init() {}

  /// Whether the latch was fulfilled.
  var isFulfilled: Bool { result != nil }

  /// Stores `value` and wakes every waiter; later calls are ignored.
  func fulfil(_ value: Value) {
    guard result == nil else { return }
    result = value
    let pending = waiters
    waiters = []
    for waiter in pending { waiter.resume(returning: value) }
  }

  /// Suspends until the latch is fulfilled and returns its value. Ignores cancellation.
  func value() async -> Value {
    if let result { return result }
    return await withCheckedContinuation { waiters.append($0) }
  }
}

extension WrapperLatch where Value == Void {
  /// Fulfils a `Void` latch.
  func fulfil() { fulfil(()) }
}

/// Small helpers for the wrapper tests.
enum WrapperProbe {
  /// Waits until the current task is cancelled and reports whether it was. Models cooperative work: it ends when its
  /// task is cancelled. A test that expects cancellation never reaches the ``SafetyLimit`` unless the behaviour is
  /// broken (then it fails, late but surely).
  static func sleepUntilCancelled(limit: Duration = SafetyLimit.standard) async -> Bool {
    await untilCancelled(timeLimit: limit)
    return Task.isCancelled
  }
}

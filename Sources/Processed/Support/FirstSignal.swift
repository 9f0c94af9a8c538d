/// One waiter, woken by the first of several signals (an attempt against its timeout, a joined load against
/// cancellation), without waiting for the losers.
///
/// `signal` from any thread, any number of times; `wait()` once.
///
/// The waiter's continuation is unchecked (a checked one allocates and checks on every wait): it is stored under the
/// lock and taken from there exactly once, by the first signal, or resumed at once when a signal came first.
///
/// A struct over its box, so that a signal is one allocation; copies are the same signal.
@usableFromInline
struct FirstSignal<Signal: Sendable>: Sendable {
  @usableFromInline let box: LockedBox<(signal: Signal?, continuation: UnsafeContinuation<Signal, Never>?)>

  // Inlinable, with the box made in the initializer (not by a property's initial value): specialized in the caller,
  // the box's type is found once, not instantiated at run time from `Signal` on every signal made.
  @inlinable
  init() {
    box = LockedBox((nil, nil))
  }

  /// Sends `signal`, unless one was sent before. Returns whether this was the first signal.
  @inlinable @discardableResult
  func signal(_ signal: Signal) -> Bool {
    let waiter: UnsafeContinuation<Signal, Never>?? = box.withLock { state in
      guard state.signal == nil else { return nil }
      state.signal = signal
      defer { state.continuation = nil }
      return .some(state.continuation)
    }
    guard case .some(let continuation) = waiter else { return false }
    continuation?.resume(returning: signal)
    return true
  }

  /// The first signal, if one was sent.
  @inlinable
  var sent: Signal? { box.withLock { $0.signal } }

  /// Returns the first signal, waiting for it if none was sent yet.
  @inlinable
  func wait(isolation: isolated (any Actor)? = #isolation) async -> Signal {
    // Sent already (a cached fetch that ended before its waiting load ran): no continuation to make.
    if let sent { return sent }
    // On the caller's actor: a main-actor waiter does not hop off the main actor and back.
    return await withUnsafeContinuation(isolation: isolation) { continuation in
      let sent: Signal? = box.withLock { state in
        if let signal = state.signal { return signal }
        state.continuation = continuation
        return nil
      }
      if let sent { continuation.resume(returning: sent) }
    }
  }
}

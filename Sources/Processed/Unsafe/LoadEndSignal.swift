public import CProcessedAtomics

/// What an `async` caller of an actor-owned state waits for: one signal, sent when its load stops being current (by
/// the owner) or when the caller is cancelled (from any thread), whichever comes first. One allocation, no lock.
///
/// Invariant: the header (the waiting continuation) is written by the waiter only before it publishes it
/// (`0 → 1`, acquire-release), and read and cleared by a signaller only after it took the `1` (`→ 2`); a waiter that
/// finds `2` resumes itself. So header accesses never overlap, and the continuation is resumed exactly once. `wait()`
/// is called once.
@usableFromInline
final class LoadEndSignal: ManagedBuffer<UnsafeContinuation<Void, Never>?, processed_atomic_u64> {
  // Thread-safe, though not `Sendable` (a `ManagedBuffer` subclass cannot be): its holders say so with
  // `nonisolated(unsafe)`.

  /// A new signal, not sent.
  @inlinable
  static func make() -> LoadEndSignal {
    let made = create(minimumCapacity: 1) { _ in nil }
    made.withUnsafeMutablePointerToElements { processed_atomic_u64_init($0, 0) }
    return unsafeDowncast(made, to: LoadEndSignal.self)
  }

  /// Sends the signal, unless it was sent before.
  @inlinable
  func signal() {
    let waiter: UnsafeContinuation<Void, Never>? = withUnsafeMutablePointers { header, state in
      guard processed_atomic_u64_exchange(state, 2) == 1 else { return nil }
      defer { header.pointee = nil }
      return header.pointee
    }
    waiter?.resume()
  }

  /// Returns once the signal is sent, on the caller's actor.
  @inlinable
  func wait(isolation: isolated (any Actor)? = #isolation) async {
    await withUnsafeContinuation(isolation: isolation) { continuation in
      let sentAlready = withUnsafeMutablePointers { header, state in
        header.pointee = continuation
        guard processed_atomic_u64_compare_exchange(state, 0, 1) else {
          header.pointee = nil
          return true
        }
        return false
      }
      if sentAlready { continuation.resume() }
    }
  }
}

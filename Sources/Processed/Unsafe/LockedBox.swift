public import CProcessedAtomics

/// A value guarded by a lock, in one allocation: a `ManagedBuffer` whose header is the value and whose one element is
/// the lock (`processed_lock`: `os_unfair_lock` on Apple platforms, a futex word on Linux, `pthread_mutex_t`
/// elsewhere).
///
/// `Synchronization.Mutex` would do, but on Linux it is built on futexes that the thread sanitizer does not model
/// (the C lock's atomics are instrumented), and on Apple platforms it needs macOS 15.
///
/// Invariant: the buffer never moves, so the lock's address is stable; the value is reached only through
/// ``withLock(_:)``, under the lock. Copies of a box share its buffer. See Unsafe/README.md.
@usableFromInline
package struct LockedBox<State>: @unchecked Sendable {
  @usableFromInline let buffer: LockedBuffer<State>

  @inlinable
  package init(_ state: State) {
    buffer = unsafeDowncast(LockedBuffer.create(minimumCapacity: 1) { _ in state }, to: LockedBuffer<State>.self)
    buffer.withUnsafeMutablePointerToElements { processed_lock_init($0) }
  }

  /// Runs `body` with exclusive access to the state. `body` must not call back into user code.
  @inlinable @inline(__always)
  package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    try buffer.withUnsafeMutablePointers { state, lock in
      processed_lock_lock(lock)
      defer { processed_lock_unlock(lock) }
      return try body(&state.pointee)
    }
  }
}

/// The memory of a ``LockedBox``: releases its lock's resources when it goes.
@usableFromInline
final class LockedBuffer<State>: ManagedBuffer<State, processed_lock> {
  deinit {
    withUnsafeMutablePointerToElements { processed_lock_destroy($0) }
  }
}

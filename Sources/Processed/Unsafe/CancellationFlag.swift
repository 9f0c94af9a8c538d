public import CProcessedAtomics

/// Whether the task running one run of a load's block was cancelled, read with one relaxed load instead of
/// `Task.isCancelled` on every `yield`; raised by a cancellation handler, so the answer is the same.
///
/// See Documentation/LoadPhases.md.
///
/// Invariant: one C11 atomic word in a `ManagedBuffer` that never moves, touched only through the C atomics.
@usableFromInline
struct CancellationFlag: @unchecked Sendable {
  // `@unchecked`: the buffer is only reached through the C atomics below (a `ManagedBuffer` is never `Sendable`).
  @usableFromInline let buffer: ManagedBuffer<Void, processed_atomic_u64>

  /// A new flag, not raised.
  @usableFromInline
  init() {
    buffer = .create(minimumCapacity: 1) { _ in }
    buffer.withUnsafeMutablePointerToElements { processed_atomic_u64_init($0, 0) }
  }

  /// Whether the flag was raised.
  @inlinable
  var isRaised: Bool {
    buffer.withUnsafeMutablePointerToElements { processed_atomic_u64_load_relaxed($0) != 0 }
  }

  /// Raises the flag; from any thread.
  @usableFromInline
  func raise() {
    buffer.withUnsafeMutablePointerToElements { processed_atomic_u64_store_relaxed($0, 1) }
  }
}

public import CProcessedAtomics

/// Whether the task running one run of a load's block was cancelled, readable at the cost of one plain load.
///
/// `Task.isCancelled` reads the task's status word, which on x86-64 is sixteen bytes read with a locked
/// compare-and-exchange (and first finds the current task in thread-local storage). A block that `yield`s checks on
/// every state it yields, so a run of a yielding block registers a cancellation handler that raises this flag, and
/// its `yield` reads the flag instead. The answer is the same: the handler runs inside `Task.cancel()` before it
/// returns (at once when the task was cancelled already), so a cancellation made on the main actor is seen by the
/// very next `yield`, and one made on another thread as soon as a relaxed load sees it — as with `Task.isCancelled`.
///
/// Invariant: one allocation (a `ManagedBuffer` whose single element is the C11 atomic word, which never moves);
/// the word is only touched through the C atomics below, so any thread may raise or read it.
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

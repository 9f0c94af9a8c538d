internal import CProcessedAtomics

/// A sequentially consistent counter (a C11 atomic: `Synchronization.Atomic` needs macOS 15 / iOS 18).
final class AtomicCounter: @unchecked Sendable {
  // `@unchecked`: the pointee is only touched through atomic operations.
  private let storage: UnsafeMutablePointer<processed_atomic_counter>

  init() {
    storage = .allocate(capacity: 1)
    processed_atomic_counter_init(storage, 0)
  }

  deinit { storage.deallocate() }

  @inline(__always) func load() -> UInt64 { processed_atomic_counter_load(storage) }
  @inline(__always) func increment() { processed_atomic_counter_increment(storage) }
}

internal import CProcessedAtomics

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Android)
  import Android
#endif

/// A sequentially consistent 64-bit atomic (a C11 atomic: `Synchronization.Atomic` needs macOS 15 / iOS 18).
final class AtomicUInt64: @unchecked Sendable {
  // `@unchecked`: the pointee is only touched through atomic operations.
  private let storage: UnsafeMutablePointer<processed_atomic_u64>

  init(_ value: UInt64 = 0) {
    storage = .allocate(capacity: 1)
    processed_atomic_u64_init(storage, value)
  }

  deinit { storage.deallocate() }

  @inline(__always) func load() -> UInt64 { processed_atomic_u64_load(storage) }
  @inline(__always) func store(_ value: UInt64) { processed_atomic_u64_store(storage, value) }
  /// A release store: enough where the only reader waits for the value to change.
  @inline(__always) func storeRelease(_ value: UInt64) { processed_atomic_u64_store_release(storage, value) }
  @inline(__always) func exchange(_ value: UInt64) -> UInt64 { processed_atomic_u64_exchange(storage, value) }
  @inline(__always) func increment() { processed_atomic_u64_increment(storage) }
  @inline(__always) func decrement() { processed_atomic_u64_decrement(storage) }
}

/// An identifier of the calling thread, distinct among live threads.
@inline(__always)
func currentThreadID() -> UInt64 {
  #if canImport(Darwin)
    UInt64(UInt(bitPattern: pthread_self()))
  #else
    UInt64(pthread_self())
  #endif
}

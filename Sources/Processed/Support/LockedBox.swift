// `pthread_mutex_t` may resolve through CProcessedAtomics, whose header includes <pthread.h>.
internal import CProcessedAtomics

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Android)
  import Android
#else
  #error("Processed needs os_unfair_lock or pthread_mutex_t on this platform.")
#endif

/// A value guarded by a lock. The lock lives in an allocation of its own, so that its address never moves (a
/// `pthread_mutex_t` must not be moved once initialized).
///
/// `Synchronization.Mutex` would do, but on Linux it is built on futexes that the thread sanitizer does not model,
/// and on Apple platforms it needs macOS 15; this box uses `os_unfair_lock` on Apple platforms and
/// `pthread_mutex_t` elsewhere, as swift-nio and swift-log do.
@usableFromInline
package final class LockedBox<State>: @unchecked Sendable {
  #if canImport(Darwin)
    private typealias Primitive = os_unfair_lock
  #else
    private typealias Primitive = pthread_mutex_t
  #endif

  private let primitive: UnsafeMutablePointer<Primitive>
  private var state: State

  @usableFromInline
  package init(_ state: State) {
    self.state = state
    primitive = .allocate(capacity: 1)
    #if canImport(Darwin)
      primitive.initialize(to: os_unfair_lock())
    #else
      primitive.initialize(to: pthread_mutex_t())
      let result = pthread_mutex_init(primitive, nil)
      precondition(result == 0, "pthread_mutex_init failed with \(result)")
    #endif
  }

  deinit {
    #if !canImport(Darwin)
      pthread_mutex_destroy(primitive)
    #endif
    primitive.deinitialize(count: 1)
    primitive.deallocate()
  }

  /// Runs `body` with exclusive access to the state. `body` must not call back into user code.
  @usableFromInline @inline(__always)
  package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    #if canImport(Darwin)
      os_unfair_lock_lock(primitive)
      defer { os_unfair_lock_unlock(primitive) }
    #else
      pthread_mutex_lock(primitive)
      defer { pthread_mutex_unlock(primitive) }
    #endif
    return try body(&state)
  }
}

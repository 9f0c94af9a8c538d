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
#endif

/// A mutex and a condition variable: a thread blocks in ``wait(while:)`` until the condition no longer holds, never
/// spinning.
///
/// Re-checked on ``wakeAll()`` and every ``interval``, so a waker that misses a waiter delays it by at most that much.
/// See Documentation/CancelHandshake.md.
@usableFromInline
final class WaitPoint: @unchecked Sendable {
  // `@unchecked`: the mutex and condition are only used through pthread calls, which are thread-safe.
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let condition: UnsafeMutablePointer<pthread_cond_t>

  init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    condition = .allocate(capacity: 1)
    condition.initialize(to: pthread_cond_t())
    let mutexResult = pthread_mutex_init(mutex, nil)
    precondition(mutexResult == 0, "pthread_mutex_init failed with \(mutexResult)")
    let conditionResult = pthread_cond_init(condition, nil)
    precondition(conditionResult == 0, "pthread_cond_init failed with \(conditionResult)")
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deinitialize(count: 1)
    condition.deallocate()
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  /// The one wait point of the process, where cancelling threads wait for a notification to end (notifications run
  /// on the main actor, one at a time, so one suffices; waits are rare).
  static let shared = WaitPoint()

  /// Wakes every thread waiting on ``shared``.
  @usableFromInline
  static func wakeShared() { shared.wakeAll() }

  /// The longest a waiter sleeps before it re-checks its condition by itself.
  static let interval: Duration = .milliseconds(1)

  /// Blocks the calling thread while `condition` is true. `condition` must only read atomics.
  func wait(while condition: () -> Bool) {
    pthread_mutex_lock(mutex)
    while condition() {
      var deadline = timespec()
      clock_gettime(CLOCK_REALTIME, &deadline)
      let nanoseconds = Int(deadline.tv_nsec) + Int(Self.interval.components.attoseconds / 1_000_000_000)
      deadline.tv_sec += nanoseconds / 1_000_000_000
      deadline.tv_nsec = .init(nanoseconds % 1_000_000_000)
      pthread_cond_timedwait(self.condition, mutex, &deadline)
    }
    pthread_mutex_unlock(mutex)
  }

  /// Wakes every waiting thread, which then re-checks its condition.
  func wakeAll() {
    pthread_mutex_lock(mutex)
    pthread_cond_broadcast(condition)
    pthread_mutex_unlock(mutex)
  }
}

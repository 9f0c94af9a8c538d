// Sequentially consistent atomics and the lock of an observer slot, for the observer registry. Swift's own
// `Synchronization.Atomic` and `Mutex` need macOS 15 / iOS 18, above this package's floor (and `Mutex` is built on
// futexes the thread sanitizer does not model on Linux), so these are C11 atomics and `pthread_mutex_t` /
// `os_unfair_lock`; the thread sanitizer models both.
//
// Everything here is `static inline`, so that Swift code that is `@inlinable` — the notification loop, specialized
// in the client for the observed value's type — compiles each operation to a few instructions.
#ifndef C_PROCESSED_ATOMICS_H
#define C_PROCESSED_ATOMICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <pthread.h>
#if defined(__APPLE__)
#include <os/lock.h>
#endif

typedef struct {
  _Atomic uint64_t value;
} processed_atomic_u64;

static inline void processed_atomic_u64_init(processed_atomic_u64 *atomic, uint64_t value) {
  atomic_init(&atomic->value, value);
}

static inline uint64_t processed_atomic_u64_load(processed_atomic_u64 *atomic) {
  return atomic_load_explicit(&atomic->value, memory_order_seq_cst);
}

static inline void processed_atomic_u64_store(processed_atomic_u64 *atomic, uint64_t value) {
  atomic_store_explicit(&atomic->value, value, memory_order_seq_cst);
}

static inline void processed_atomic_u64_store_release(processed_atomic_u64 *atomic, uint64_t value) {
  atomic_store_explicit(&atomic->value, value, memory_order_release);
}

static inline uint64_t processed_atomic_u64_exchange(processed_atomic_u64 *atomic, uint64_t value) {
  return atomic_exchange_explicit(&atomic->value, value, memory_order_seq_cst);
}

static inline void processed_atomic_u64_increment(processed_atomic_u64 *atomic) {
  atomic_fetch_add_explicit(&atomic->value, 1, memory_order_seq_cst);
}

static inline void processed_atomic_u64_decrement(processed_atomic_u64 *atomic) {
  atomic_fetch_sub_explicit(&atomic->value, 1, memory_order_seq_cst);
}

/// An identifier of the calling thread, distinct among live threads.
static inline uint64_t processed_current_thread(void) {
  return (uint64_t)(uintptr_t)pthread_self();
}

// MARK: One observer slot's lock and cancellation counter

/// Kept in the slot's own allocation (the tail of a `ManagedBuffer`), so that a slot is one allocation.
typedef struct {
#if defined(__APPLE__)
  os_unfair_lock lock;
#else
  pthread_mutex_t lock;
#endif
  /// Bumped under the lock by every removal of an observer (and by closing the slot).
  processed_atomic_u64 cancellations;
} processed_slot_sync;

static inline void processed_slot_sync_init(processed_slot_sync *sync) {
#if defined(__APPLE__)
  sync->lock = OS_UNFAIR_LOCK_INIT;
#else
  pthread_mutex_init(&sync->lock, NULL);
#endif
  processed_atomic_u64_init(&sync->cancellations, 0);
}

static inline void processed_slot_sync_destroy(processed_slot_sync *sync) {
#if !defined(__APPLE__)
  pthread_mutex_destroy(&sync->lock);
#endif
}

static inline void processed_slot_lock(processed_slot_sync *sync) {
#if defined(__APPLE__)
  os_unfair_lock_lock(&sync->lock);
#else
  pthread_mutex_lock(&sync->lock);
#endif
}

static inline void processed_slot_unlock(processed_slot_sync *sync) {
#if defined(__APPLE__)
  os_unfair_lock_unlock(&sync->lock);
#else
  pthread_mutex_unlock(&sync->lock);
#endif
}

static inline uint64_t processed_slot_cancellations(processed_slot_sync *sync) {
  return processed_atomic_u64_load(&sync->cancellations);
}

static inline void processed_slot_bump_cancellations(processed_slot_sync *sync) {
  processed_atomic_u64_increment(&sync->cancellations);
}

// MARK: The notification in progress (one per process: observers are called on the main actor only)

typedef struct {
  /// The slot being notified right now (its address; 0: none).
  processed_atomic_u64 active;
  /// The thread notifying it.
  processed_atomic_u64 thread;
  /// How many notifications have ended; written by the notifying thread only.
  processed_atomic_u64 ended;
  /// How many cancelling threads are blocked until a notification ends.
  processed_atomic_u64 waiters;
} processed_notification_state;

/// Defined in CProcessedAtomics.c.
extern processed_notification_state processed_notifications;

/// Publishes `slot` as the slot being notified and returns the one it replaces (0 at the outermost level).
static inline uint64_t processed_notification_begin(uint64_t slot) {
  uint64_t thread = processed_current_thread();
  if (processed_atomic_u64_load(&processed_notifications.thread) != thread) {
    processed_atomic_u64_store(&processed_notifications.thread, thread);
  }
  return processed_atomic_u64_exchange(&processed_notifications.active, slot);
}

/// Ends a notification begun by `processed_notification_begin`, handing the active slot back to `previous`.
/// Returns whether a cancelling thread may be waiting (then wake it).
///
/// Nested in another slot's notification, the active slot is handed back with a sequentially consistent exchange,
/// not a release store: the outer loop then reads cancellation counters again, and a release store may be ordered
/// after those reads (x86 lets a store pass a later load), so a canceller could miss both. At the outermost level
/// no read follows and a release store is enough: a canceller only waits for the value to change.
static inline bool processed_notification_end(uint64_t previous) {
  processed_atomic_u64_store_release(
      &processed_notifications.ended,
      atomic_load_explicit(&processed_notifications.ended.value, memory_order_relaxed) + 1);
  if (previous == 0) {
    processed_atomic_u64_store_release(&processed_notifications.active, 0);
  } else {
    (void)processed_atomic_u64_exchange(&processed_notifications.active, previous);
  }
  // A fence-less read: a waiter arriving at this instant is missed and re-checks on its own (see WaitPoint).
  return processed_atomic_u64_load(&processed_notifications.waiters) != 0;
}

/// Whether `slot` is being notified on a thread other than the calling one.
static inline bool processed_notification_is_elsewhere(uint64_t slot) {
  return processed_atomic_u64_load(&processed_notifications.active) == slot &&
         processed_atomic_u64_load(&processed_notifications.thread) != processed_current_thread();
}

/// How many notifications have ended so far.
static inline uint64_t processed_notification_ended_count(void) {
  return processed_atomic_u64_load(&processed_notifications.ended);
}

/// Whether `slot` is still being notified and no notification has ended since `ended` was read.
static inline bool processed_notification_is_unchanged(uint64_t slot, uint64_t ended) {
  return processed_atomic_u64_load(&processed_notifications.active) == slot &&
         processed_atomic_u64_load(&processed_notifications.ended) == ended;
}

static inline void processed_notification_waiter_arrives(void) {
  processed_atomic_u64_increment(&processed_notifications.waiters);
}

static inline void processed_notification_waiter_leaves(void) {
  processed_atomic_u64_decrement(&processed_notifications.waiters);
}

#endif

// The C half of the package's speed-only machinery (see Sources/Processed/Unsafe/README.md): C11 atomics, the lock of
// an observer slot, the process-wide notification bookkeeping, the main actor's key-path write depth and its count of
// states bound to a cache. C, because `Synchronization` needs macOS 15; all `static inline`, so the notification loop
// inlined into clients compiles each operation to a few instructions. See Documentation/ObserverDelivery.md.
#ifndef C_PROCESSED_ATOMICS_H
#define C_PROCESSED_ATOMICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <pthread.h>
#if defined(__APPLE__)
#include <os/lock.h>
#elif defined(__linux__)
#define PROCESSED_FUTEX_LOCK 1
#endif

#if defined(__has_builtin)
#if __has_builtin(__builtin_thread_pointer)
#define PROCESSED_HAS_THREAD_POINTER 1
#endif
#endif

typedef struct {
  _Atomic uint64_t value;
} processed_atomic_u64;

static inline void processed_atomic_u64_init(processed_atomic_u64 *atomic, uint64_t value) {
  atomic_init(&atomic->value, value);
}

/// A relaxed load: for a flag that only says *whether* something happened, and orders nothing else.
static inline uint64_t processed_atomic_u64_load_relaxed(processed_atomic_u64 *atomic) {
  return atomic_load_explicit(&atomic->value, memory_order_relaxed);
}

static inline void processed_atomic_u64_store_relaxed(processed_atomic_u64 *atomic, uint64_t value) {
  atomic_store_explicit(&atomic->value, value, memory_order_relaxed);
}

static inline void processed_atomic_u64_increment(processed_atomic_u64 *atomic) {
  atomic_fetch_add_explicit(&atomic->value, 1, memory_order_seq_cst);
}

static inline void processed_atomic_u64_decrement(processed_atomic_u64 *atomic) {
  atomic_fetch_sub_explicit(&atomic->value, 1, memory_order_seq_cst);
}

/// An identifier of the calling thread, distinct among live threads: the thread pointer where the compiler can read
/// it (one instruction, `mov %fs:0` on x86-64; each live thread has its own thread control block), else
/// `pthread_self()` (a call into libc on every snapshot).
static inline uint64_t processed_current_thread(void) {
#if defined(__linux__) && PROCESSED_HAS_THREAD_POINTER
  return (uint64_t)(uintptr_t)__builtin_thread_pointer();
#else
  return (uint64_t)(uintptr_t)pthread_self();
#endif
}

// MARK: A lock kept in its owner's allocation

#if PROCESSED_FUTEX_LOCK
// The futex lock (Linux): one atomic instruction each way, where a `pthread_mutex_t` costs two calls into libc.
//
// Invariant: the word is 0 (unlocked), 1 (locked) or 2 (locked, a thread may sleep); a sleeper sets 2 before
// `FUTEX_WAIT`, and an unlock that finds 2 wakes one, so no wake is lost. See Documentation/ObserverDelivery.md.

/// Sleeps until the lock is free and takes it (the lock was found taken).
void processed_futex_lock_wait(_Atomic uint32_t *word);
/// Wakes one thread sleeping on the lock.
void processed_futex_wake(_Atomic uint32_t *word);
#endif

/// A lock that lives in place in its owner's allocation (the tail of a `ManagedBuffer`, which never moves), so that
/// the owner and its lock are one allocation: `os_unfair_lock` on Apple platforms, the futex lock on Linux,
/// `pthread_mutex_t` elsewhere.
typedef struct {
#if defined(__APPLE__)
  os_unfair_lock word;
#elif PROCESSED_FUTEX_LOCK
  _Atomic uint32_t word;
#else
  pthread_mutex_t word;
#endif
} processed_lock;

static inline void processed_lock_init(processed_lock *lock) {
#if defined(__APPLE__)
  lock->word = OS_UNFAIR_LOCK_INIT;
#elif PROCESSED_FUTEX_LOCK
  atomic_init(&lock->word, 0);
#else
  pthread_mutex_init(&lock->word, NULL);
#endif
}

static inline void processed_lock_destroy(processed_lock *lock) {
#if !defined(__APPLE__) && !PROCESSED_FUTEX_LOCK
  pthread_mutex_destroy(&lock->word);
#else
  (void)lock;
#endif
}

static inline void processed_lock_lock(processed_lock *lock) {
#if defined(__APPLE__)
  os_unfair_lock_lock(&lock->word);
#elif PROCESSED_FUTEX_LOCK
  uint32_t unlocked = 0;
  if (__builtin_expect(
          !atomic_compare_exchange_strong_explicit(
              &lock->word, &unlocked, 1, memory_order_acquire, memory_order_relaxed),
          0)) {
    processed_futex_lock_wait(&lock->word);
  }
#else
  pthread_mutex_lock(&lock->word);
#endif
}

static inline void processed_lock_unlock(processed_lock *lock) {
#if defined(__APPLE__)
  os_unfair_lock_unlock(&lock->word);
#elif PROCESSED_FUTEX_LOCK
  if (__builtin_expect(atomic_exchange_explicit(&lock->word, 0, memory_order_release) == 2, 0)) {
    processed_futex_wake(&lock->word);
  }
#else
  pthread_mutex_unlock(&lock->word);
#endif
}

// MARK: One observer slot's lock and counters

/// Kept in the slot's own allocation (the tail of a `ManagedBuffer`), so that a slot is one allocation.
typedef struct {
  processed_lock lock;
  /// Bumped under the lock by every removal of an observer (and by closing the slot); read by notifications
  /// without it. Compared for equality only, so it may wrap.
  _Atomic uint32_t removals;
  /// How many notifications of the slot have ended; written by the notifying thread only (observers are called on
  /// the main actor), read by cancelling threads. Wraps; compared as a difference.
  _Atomic uint32_t ended;
  /// How many observers are registered; written under the lock, read by notifications without it, so that a write
  /// of a state nobody observes takes no lock.
  _Atomic uint32_t observers;
} processed_slot_sync;

static inline void processed_slot_sync_init(processed_slot_sync *sync) {
  processed_lock_init(&sync->lock);
  atomic_init(&sync->removals, 0);
  atomic_init(&sync->ended, 0);
  atomic_init(&sync->observers, 0);
}

static inline void processed_slot_sync_destroy(processed_slot_sync *sync) { processed_lock_destroy(&sync->lock); }

static inline void processed_slot_lock(processed_slot_sync *sync) { processed_lock_lock(&sync->lock); }

static inline void processed_slot_unlock(processed_slot_sync *sync) { processed_lock_unlock(&sync->lock); }

/// The removal count. Relaxed: under the lock it is exact; a notification reading it without the lock relies on
/// happens-before edges the lock and the main actor provide (see `ObserverSlot`).
static inline uint32_t processed_slot_removals(processed_slot_sync *sync) {
  return atomic_load_explicit(&sync->removals, memory_order_relaxed);
}

/// Under the lock: counts a removal.
static inline void processed_slot_count_removal(processed_slot_sync *sync) {
  atomic_store_explicit(
      &sync->removals, atomic_load_explicit(&sync->removals, memory_order_relaxed) + 1, memory_order_relaxed);
}

/// Whether any observer is registered. Relaxed: an observer registered on another thread without any ordering with
/// the write may be missed, as it may be in any case; one registered before the write on the writing thread, or
/// ordered before it, is seen.
static inline bool processed_slot_has_observers(processed_slot_sync *sync) {
  return atomic_load_explicit(&sync->observers, memory_order_relaxed) != 0;
}

/// Under the lock: records the number of registered observers.
static inline void processed_slot_set_observers(processed_slot_sync *sync, uint32_t count) {
  atomic_store_explicit(&sync->observers, count, memory_order_relaxed);
}

// MARK: Notifications (observers are called on the main actor only)

typedef struct {
  /// The thread that notifies (the main actor's), so that a cancellation on it never waits for itself.
  processed_atomic_u64 thread;
  /// How many cancelling threads are blocked until a notification ends.
  processed_atomic_u64 waiters;
  /// The last observer id handed out; ids are never reused.
  processed_atomic_u64 lastID;
} processed_notification_state;

/// Defined in CProcessedAtomics.c.
extern processed_notification_state processed_notifications;

/// Records the calling thread as the notifying one (before a snapshot is taken under a slot's lock).
static inline void processed_notification_note_thread(void) {
  uint64_t thread = processed_current_thread();
  if (atomic_load_explicit(&processed_notifications.thread.value, memory_order_relaxed) != thread) {
    atomic_store_explicit(&processed_notifications.thread.value, thread, memory_order_relaxed);
  }
}

/// Whether the calling thread is the notifying one.
static inline bool processed_notification_is_current_thread(void) {
  return atomic_load_explicit(&processed_notifications.thread.value, memory_order_relaxed) ==
         processed_current_thread();
}

/// Ends a notification of the slot: counts it (a release store: its only writer is the notifying thread) and
/// returns whether a cancelling thread may be waiting (then wake it). The waiter count is read without a fence: a
/// waiter arriving at this instant is missed and re-checks on its own (see WaitPoint).
static inline bool processed_slot_notification_end(processed_slot_sync *sync) {
  atomic_store_explicit(
      &sync->ended, atomic_load_explicit(&sync->ended, memory_order_relaxed) + 1, memory_order_release);
  return atomic_load_explicit(&processed_notifications.waiters.value, memory_order_relaxed) != 0;
}

/// Whether a notification that had begun when `begun` was read under the lock may still be under way: fewer than
/// `begun` notifications of the slot have ended.
static inline bool processed_slot_notification_may_run(processed_slot_sync *sync, uint32_t begun) {
  return (int32_t)(atomic_load_explicit(&sync->ended, memory_order_acquire) - begun) < 0;
}

static inline void processed_notification_waiter_arrives(void) {
  processed_atomic_u64_increment(&processed_notifications.waiters);
}

static inline void processed_notification_waiter_leaves(void) {
  processed_atomic_u64_decrement(&processed_notifications.waiters);
}

/// A new observer id, unique in the process.
static inline uint64_t processed_next_observer_id(void) {
  return atomic_fetch_add_explicit(&processed_notifications.lastID.value, 1, memory_order_relaxed) + 1;
}

// MARK: Main-actor counters

/// Counters read and written on the main actor only, as plain fields. Kept here rather than in Swift statics so that
/// Swift code inlined into a client reaches them as plain globals: a Swift static used from another module goes
/// through its lazy-initialization check on every access.
typedef struct {
  /// How many key-path writes are in progress, nested (see `KeyPathWrites` in Swift).
  uint16_t keypath_write_depth;
  /// How many states are bound to a `LoadCache` entry (see `CacheBindings` in Swift): while none is, a load's start
  /// and cancel pay one load of this field for the cache.
  uint32_t cache_bound_states;
  /// The last version given to a cache entry's value (see `CacheEntry.version` in Swift).
  uint64_t cache_version;
} processed_main_actor_counters;

/// Defined in CProcessedAtomics.c.
extern processed_main_actor_counters processed_main_counters;

static inline uint16_t processed_keypath_write_depth(void) { return processed_main_counters.keypath_write_depth; }

static inline void processed_keypath_set_write_depth(uint16_t depth) {
  processed_main_counters.keypath_write_depth = depth;
}

static inline uint32_t processed_cache_bound_states(void) { return processed_main_counters.cache_bound_states; }

static inline void processed_cache_set_bound_states(uint32_t count) {
  processed_main_counters.cache_bound_states = count;
}

/// A cache entry's next version: unique across the entries of every cache, so that a state that shows one entry's value
/// at a version never takes another entry's value for it.
static inline uint64_t processed_next_cache_version(void) { return ++processed_main_counters.cache_version; }

// MARK: Cache calls off the main actor (any thread)

/// Set once, by the first `LoadCache` method called off the main actor in the process (any cache): until then, a
/// method called on the main actor has no queued calls to run first and pays one relaxed load for them.
extern _Atomic uint32_t processed_cache_off_main;

static inline bool processed_cache_was_used_off_main(void) {
  return atomic_load_explicit(&processed_cache_off_main, memory_order_relaxed) != 0;
}

static inline void processed_cache_note_off_main(void) {
  atomic_store_explicit(&processed_cache_off_main, 1, memory_order_relaxed);
}

#endif

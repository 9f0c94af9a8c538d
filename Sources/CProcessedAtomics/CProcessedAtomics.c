#include "CProcessedAtomics.h"

// The one notification state of the process (zero: no notification in progress).
processed_notification_state processed_notifications;

// The key-path writes in progress and the states bound to a cache entry (main actor only; zero: none).
processed_main_actor_counters processed_main_counters;
_Atomic uint32_t processed_cache_off_main;

#if PROCESSED_FUTEX_LOCK
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

// The slow paths of the futex lock; its invariant is written beside `processed_slot_lock` in CProcessedAtomics.h.

void processed_futex_lock_wait(_Atomic uint32_t *word) {
  // Marks the lock as wanted (2) and takes it if that found it free; otherwise sleeps while it stays wanted. The
  // kernel returns at once when the word is no longer 2, and spuriously at times: each wake-up exchanges again.
  while (atomic_exchange_explicit(word, 2, memory_order_acquire) != 0) {
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
  }
}

void processed_futex_wake(_Atomic uint32_t *word) {
  syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
#endif

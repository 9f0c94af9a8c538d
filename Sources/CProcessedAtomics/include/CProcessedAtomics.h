// A single sequentially consistent counter, used by the observer registry to learn cheaply whether any observer was
// cancelled since a notification took its snapshot. Swift's own `Synchronization.Atomic` needs macOS 15 / iOS 18,
// above this package's floor, so the counter is a C11 atomic; the thread sanitizer models it.
#ifndef C_PROCESSED_ATOMICS_H
#define C_PROCESSED_ATOMICS_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct {
  _Atomic uint64_t value;
} processed_atomic_counter;

static inline void processed_atomic_counter_init(processed_atomic_counter *counter, uint64_t value) {
  atomic_init(&counter->value, value);
}

static inline uint64_t processed_atomic_counter_load(processed_atomic_counter *counter) {
  return atomic_load_explicit(&counter->value, memory_order_seq_cst);
}

static inline void processed_atomic_counter_increment(processed_atomic_counter *counter) {
  atomic_fetch_add_explicit(&counter->value, 1, memory_order_seq_cst);
}

#endif

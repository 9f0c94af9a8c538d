// Sequentially consistent 64-bit atomics for the observer registry. Swift's own `Synchronization.Atomic` needs
// macOS 15 / iOS 18, above this package's floor, so these are C11 atomics; the thread sanitizer models them.
#ifndef C_PROCESSED_ATOMICS_H
#define C_PROCESSED_ATOMICS_H

#include <stdatomic.h>
#include <stdint.h>

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

#endif

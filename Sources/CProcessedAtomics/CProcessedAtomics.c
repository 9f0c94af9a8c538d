// Intentionally empty: everything lives in the header as static inline functions.

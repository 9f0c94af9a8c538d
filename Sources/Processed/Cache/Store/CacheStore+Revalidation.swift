extension CacheStore {
  /// Runs `body` on the main actor: at once when the caller is on it, else at its next turn.
  nonisolated func onMainActor(_ body: @escaping @MainActor @Sendable (CacheStore) -> Void) {
    if MainQueue.isCurrent {
      MainActor.assumeIsolated { body(self) }
    } else {
      Task { @MainActor in body(self) }
    }
  }

  /// Acts on what the app last told the cache, against what was last acted on: a `false` → `true` change of focus or
  /// network revalidates the bound entries (O(bound entries)); focus going stops polls that stay in the foreground.
  /// Reading the environment here, rather than the value a call passed, keeps calls from several threads in one order.
  @MainActor
  func environmentChanged() {
    guard !isClosed else { return }
    let now = environment.withLock { $0 }
    let was = applied
    applied = now
    guard now != was else { return }
    let focusReturned = now.isFocused && !was.isFocused
    let networkReturned = now.isOnline && !was.isOnline
    // Paused fetches and mutations go on first, in the order they paused; a revalidation then joins a fetch in flight.
    if now.isOnline != was.isOnline { networkWaiters.setOnline(now.isOnline) }
    let entries = Array(boundEntries.values)
    if focusReturned || networkReturned {
      let time = clock.now()
      for entry in entries {
        entry.revalidate(now: time, throttle: revalidationThrottle, focusReturned: focusReturned)
      }
    } else if !now.isFocused && was.isFocused {
      for entry in entries { entry.focusLost() }
    }
  }
}

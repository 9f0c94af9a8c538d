extension CacheStore {
  /// ``LoadCache/mutate(_:optimistic:operation:)``.
  @MainActor
  func mutate<V, R>(
    _ key: CacheKey<V>, optimistic update: @escaping (inout V) -> Void, operation: () async throws -> R
  ) async throws -> R {
    let erased = key.erased
    let log: KeyMutations<V>
    if let running = mutations[erased] as? KeyMutations<V> {
      log = running
    } else {
      log = KeyMutations<V>()
      log.base = entry(for: key)?.value
      mutations[erased] = log
    }
    let id = log.add(log.base == nil ? nil : update)
    show(log, for: key)
    do {
      // Offline, the operation waits (its update shown) until the network is back; paused mutations are resumed in the
      // order they paused. Cancelled meanwhile (or the cache went away), it is undone and never runs.
      if !networkWaiters.isOnline {
        if Task.isCancelled { throw CancellationError() }
        guard await networkWaiters.wait() else { throw CancellationError() }
      }
      let result = try await operation()
      log.succeed(id)
      if log.running == 0 { end(log, for: key) }
      return result
    } catch {
      log.fail(id)
      show(log, for: key)
      if log.running == 0 { end(log, for: key) }
      throw error
    }
  }

  /// Whether a fetch of `key` that ends now must write nothing (a mutation of the key runs).
  @usableFromInline @MainActor
  func isMutating(_ key: AnyCacheKey) -> Bool {
    !mutations.isEmpty && mutations[key] != nil
  }

  /// Writes what the key's mutations show to its entry and every bound state.
  @MainActor
  private func show<V>(_ log: KeyMutations<V>, for key: CacheKey<V>) {
    guard !log.isDetached, let value = log.shown, let entry = entry(for: key) else { return }
    entry.show(value)
  }

  /// The last running mutation of the key ended: the updates go, and the key is invalidated once.
  @MainActor
  private func end<V>(_ log: KeyMutations<V>, for key: CacheKey<V>) {
    log.end()
    guard !log.isDetached else { return }
    mutations[key.erased] = nil
    invalidate(key)
  }
}

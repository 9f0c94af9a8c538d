extension CacheStore {
  /// ``LoadCache/mutate(_:optimistic:operation:)``, from the caller's isolation: the bookkeeping runs on the main actor
  /// (after the calls queued off it), `operation` where the caller runs.
  nonisolated(nonsending) func mutate<V, R>(
    _ key: CacheKey<V>, optimistic update: @escaping @MainActor (inout V) -> Void,
    operation: nonisolated(nonsending) () async throws -> R
  ) async throws -> R {
    let started = await beginMutation(key, optimistic: update)
    do {
      // Offline, the operation waits (its update shown) until the network is back; paused mutations are resumed in the
      // order they paused. Cancelled meanwhile (or the cache went away), it is undone and never runs.
      try await waitForNetworkIfOffline()
      let result = try await operation()
      await endMutation(started, of: key, failed: false)
      return result
    } catch {
      await endMutation(started, of: key, failed: true)
      throw error
    }
  }

  /// Registers a mutation of `key` and shows its update; returns its log and id.
  @MainActor
  func beginMutation<V>(
    _ key: CacheKey<V>, optimistic update: @escaping @MainActor (inout V) -> Void
  ) -> MutationStart<V> {
    runQueuedCalls()
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
    return MutationStart(log: log, id: id)
  }

  /// Waits while the cache is offline; throws `CancellationError` when the caller was cancelled or the cache went away.
  @MainActor
  func waitForNetworkIfOffline() async throws {
    guard !networkWaiters.isOnline else { return }
    if Task.isCancelled { throw CancellationError() }
    guard await networkWaiters.wait() else { throw CancellationError() }
  }

  /// The mutation `started` ended: a failure undoes its update; the last running mutation of the key invalidates it.
  @MainActor
  func endMutation<V>(_ started: MutationStart<V>, of key: CacheKey<V>, failed: Bool) {
    runQueuedCalls()
    let log = started.log
    if failed {
      log.fail(started.id)
      show(log, for: key)
    } else {
      log.succeed(started.id)
    }
    if log.running == 0 { end(log, for: key) }
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

/// A mutation that began: its key's log and its id there.
struct MutationStart<Value: Sendable>: Sendable {
  let log: KeyMutations<Value>
  let id: UInt64
}

extension LoadCache {
  /// Shows `update` applied to `key`'s value at once, runs `operation`, and undoes the update if it fails —
  /// without ever losing to a refetch or to another mutation.
  ///
  /// Every state bound to the key sees the updated value at once, through its normal write path (its activity does
  /// not show a load). While any mutation of the key runs, fetches of it write nothing: their answer may predate the
  /// mutation. When the operation throws — `CancellationError` included — its update is undone: the key shows its base
  /// (the last value written by a fetch or by ``set(_:for:)``) with the updates of the other mutations that have not
  /// failed applied again, in the order they started, and the error is rethrown. When the last running mutation of
  /// the key ends, the key is invalidated once: states bound to it fetch the server's answer.
  ///
  /// ```swift
  /// func post(_ draft: Comment) {
  ///   $save.run {
  ///     try await cache.mutate(.comments(post.id), optimistic: { $0.append(draft) }) {
  ///       try await api.post(draft)
  ///     }
  ///   }
  /// }
  /// ```
  ///
  /// With no value for `key`, `update` is not called and no entry is made; the key is still invalidated at the end.
  /// ``remove(_:)`` and ``removeAll()`` end the key's mutations: one that ends afterwards writes and invalidates
  /// nothing.
  ///
  /// > Note: A mutation that succeeds returns once no other mutation of the same key is running: until then its
  /// > update may have to be applied again (when another one fails, or `set` writes a new base), and `update` is only
  /// > valid during the call. Only the caller's task cancels `operation`.
  ///
  /// - Parameters:
  ///   - key: The key whose value changes.
  ///   - update: Changes the value in place, as the server will once `operation` succeeds.
  ///   - operation: The request that makes the change.
  /// - Returns: What `operation` returned.
  @MainActor
  public func mutate<V, R>(
    _ key: CacheKey<V>, optimistic update: (inout V) -> Void, operation: () async throws -> R
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
    return try await withoutActuallyEscaping(update) { update in
      let id = log.add(log.base == nil ? nil : update)
      show(log, for: key)
      do {
        let result = try await operation()
        log.succeed(id)
        if log.running == 0 { end(log, for: key) } else { await log.untilNoneRuns() }
        return result
      } catch {
        log.fail(id)
        show(log, for: key)
        if log.running == 0 { end(log, for: key) }
        throw error
      }
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

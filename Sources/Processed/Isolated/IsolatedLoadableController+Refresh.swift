extension IsolatedLoadableController {
  /// Loads again while keeping the loaded value, and returns the load's task: from `.loaded(value)` no `.loading` is
  /// written and an ordinary failure keeps the value (its error goes to ``activity``'s
  /// ``LoadActivity/lastError``); from any other state it is the returning `load`.
  ///
  /// ```swift
  /// $config.refresh { try await api.config() }
  /// ```
  ///
  /// - Parameters:
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - priority: The priority of the load's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Returns the loaded value, or throws.
  /// - Returns: The load's task.
  @discardableResult
  public func refresh(
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Value
  ) -> Task<Void, Never> {
    if let calm = storage.calmOptions(options) {
      return storage.startCalm(
        calm, silently: false, priority: priority, refreshing: true, isolation: isolation, block: block)
    }
    return storage.start(
      .load(returning: block), silently: false, options: options, priority: priority, refreshing: true,
      isolation: isolation)
  }

  /// Loads again while keeping the loaded value, and waits until the load stops. See the Task form of `refresh`.
  ///
  /// ```swift
  /// await $config.refresh { try await api.config() }
  /// if let error = $config.activity.lastError { log(error) }
  /// ```
  ///
  /// - Parameters:
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Returns the loaded value, or throws.
  public consuming func refresh(
    options: LoadOptions? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping () async throws -> Value
  ) async {
    if let calm = storage.calmOptions(options) {
      let task = storage.startCalm(
        calm, silently: false, priority: nil, refreshing: true, isolation: isolation, block: block)
      _ = consume self  // waits without keeping the state alive
      await waitForMirrored(task)
      return
    }
    let load = storage.startAwaited(
      .load(returning: block), silently: false, options: options, refreshing: true, isolation: isolation
    )
    _ = consume self  // waits without keeping the state alive
    await load.wait(isolation: isolation)
  }
}

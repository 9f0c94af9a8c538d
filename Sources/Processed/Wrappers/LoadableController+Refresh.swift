extension LoadableController {
  /// Loads again while keeping the loaded value on screen, and returns the load's task.
  ///
  /// From `.loaded(value)`: no `.loading` is written, success writes `.loaded(newValue)`, and an ordinary failure
  /// keeps `.loaded(value)` and puts the error in ``activity``'s ``LoadActivity/lastError`` (a control error or
  /// cancellation acts as usual). From any other state it is exactly the `load` that returns a value.
  ///
  /// ```swift
  /// func pullToRefresh() {
  ///   $feed.refresh { try await api.feed() }  // the feed stays visible; a failure shows as a banner
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - priority: The priority of the load's task.
  ///   - block: Returns the loaded value, or throws.
  /// - Returns: The load's task.
  @discardableResult
  public func refresh(
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    block: @escaping @MainActor () async throws -> Value
  ) -> Task<Void, Never> {
    target.start(.load(returning: block), silently: false, options: options, priority: priority, refreshing: true)
  }

  /// Loads again while keeping the loaded value on screen, and waits until the load ends. See
  /// the Task form of `refresh`.
  ///
  /// ```swift
  /// await $feed.refresh { try await api.feed() }
  /// if let error = $feed.activity.lastError { showBanner(error) }
  /// ```
  ///
  /// - Parameters:
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - block: Returns the loaded value, or throws.
  public consuming func refresh(
    options: LoadOptions? = nil,
    block: @escaping @MainActor () async throws -> Value
  ) async {
    let load = target.startAwaited(.load(returning: block), silently: false, options: options, refreshing: true)
    _ = consume self  // wait without holding the state (see `StateHost.startAwaited`)
    await load.wait()
  }
}

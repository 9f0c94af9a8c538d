extension LoadableSupport {
  /// Loads the next page of the list at `state` and appends it, without writing `.loading`; returns the load's task.
  ///
  /// From `.loaded(pages)` with `pages.hasMore`, `block` gets `pages.nextCursor` and the page it returns is appended.
  /// A failure keeps the list and sets the activity's `lastError`. In every other case — including another load or
  /// refresh of the state in progress — it does nothing and its task ends at once. A `loadMore` while another runs
  /// joins it. See ``LoadableController/loadMore(options:priority:block:)``.
  ///
  /// ```swift
  /// loadMore(\.feed) { cursor in try await api.posts(after: cursor) }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - priority: The priority of the load's task.
  ///   - block: Fetches the page at the cursor it is given.
  /// - Returns: The load's task; for a call that joins a running `loadMore`, a task of its own that ends with it
  ///   (cancelling it ends only that call).
  @MainActor
  @discardableResult
  public func loadMore<Item: Sendable, Cursor: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Pages<Item, Cursor>>>,
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    @_implicitSelfCapture block: @escaping @MainActor (_ cursor: Cursor) async throws -> Pages<Item, Cursor>
  ) -> Task<Void, Never> {
    KeyPathHost.startLoadMore(
      self, state(), KeyPathAccess(state()), { PageLoad.plan(after: $0, block) }, options: options,
      priority: priority) ?? KeyPathTargetEnded.task
  }

  /// Loads the next page of the list at `state` and appends it, and returns when the load (or the `loadMore` it
  /// joined) has ended, at once when it does nothing. See ``loadMore(_:options:priority:block:)``.
  ///
  /// ```swift
  /// await loadMore(\.feed) { cursor in try await api.posts(after: cursor) }
  /// ```
  ///
  /// - Parameters:
  ///   - state: The key path of the state.
  ///   - options: The load's options; `nil`: `.default`, or a `@Loadable` property's declaration options.
  ///   - block: Fetches the page at the cursor it is given.
  @MainActor
  public func loadMore<Item: Sendable, Cursor: Sendable>(
    _ state: @autoclosure () -> ReferenceWritableKeyPath<Self, LoadableState<Pages<Item, Cursor>>>,
    options: LoadOptions? = nil,
    @_implicitSelfCapture block: @escaping @MainActor (_ cursor: Cursor) async throws -> Pages<Item, Cursor>
  ) async {
    guard
      let load = KeyPathHost.startAwaitedLoadMore(
        self, state(), KeyPathAccess(state()), { PageLoad.plan(after: $0, block) }, options: options)
    else { return }
    await load.wait()
  }
}

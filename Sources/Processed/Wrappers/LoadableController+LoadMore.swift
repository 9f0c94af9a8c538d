extension LoadableController {
  /// Loads the next page of a list and appends it, without writing `.loading`; returns the load's task.
  ///
  /// When the state is `.loaded(pages)` and `pages.hasMore`, `block` gets `pages.nextCursor`; the items of the page
  /// it returns are appended, and its cursor becomes the next one. The activity shows the fetch
  /// (``LoadActivity/phase``). A failure keeps the list on screen and sets ``LoadActivity/lastError``; the next
  /// `loadMore` asks for the same cursor again. In every other case — `.absent`, `.loading`, `.error`, no more pages, or
  /// another load or refresh of the state in progress — it does nothing and its task ends at once.
  ///
  /// A `loadMore` while another one runs joins it: the page is fetched once, and the joining call's task ends when
  /// that fetch ends. A `load`, `refresh`, `reset()`, `cancel()` or manual write supersedes a running `loadMore`: its
  /// page is never appended. Retry, timeout, the limiter and the clock of `options` apply; debounce, overlap and calm
  /// presentation do not.
  ///
  /// ```swift
  /// $feed.loadMore { cursor in
  ///   try await api.posts(after: cursor)  // returns Pages(items: posts, nextCursor: nextCursorOrNil)
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - priority: The priority of the load's task.
  ///   - block: Fetches the page at the cursor it is given.
  /// - Returns: The load's task; for a call that joins a running `loadMore`, a task of its own that ends with it
  ///   (cancelling it ends only that call).
  @discardableResult
  public func loadMore<Item, Cursor>(
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    block: @escaping @MainActor (_ cursor: Cursor) async throws -> Pages<Item, Cursor>
  ) -> Task<Void, Never> where Value == Pages<Item, Cursor> {
    target.startLoadMore({ PageLoad.plan(after: $0, block) }, options: options, priority: priority)
      ?? KeyPathTargetEnded.task
  }

  /// Loads the next page of a list and appends it, and returns when the load (or the `loadMore` it joined) has ended,
  /// at once when it does nothing. See ``loadMore(options:priority:block:)``.
  ///
  /// ```swift
  /// await $feed.loadMore { cursor in try await api.posts(after: cursor) }
  /// ```
  ///
  /// - Parameters:
  ///   - options: The load's options; `nil`: the declaration's (`@Loadable(options:)`).
  ///   - block: Fetches the page at the cursor it is given.
  public consuming func loadMore<Item, Cursor>(
    options: LoadOptions? = nil,
    block: @escaping @MainActor (_ cursor: Cursor) async throws -> Pages<Item, Cursor>
  ) async where Value == Pages<Item, Cursor> {
    guard let load = target.startAwaitedLoadMore({ PageLoad.plan(after: $0, block) }, options: options) else {
      return
    }
    _ = consume self  // wait without holding the state (see `StateHost.startAwaited`)
    await load.wait()
  }
}

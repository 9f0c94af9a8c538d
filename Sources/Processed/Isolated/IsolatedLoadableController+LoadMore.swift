extension IsolatedLoadableController {
  /// Loads the next page of a list and appends it, without writing `.loading`; returns the load's task — the rules of
  /// `LoadableController.loadMore(options:priority:block:)`, for a state owned by an actor. `block` runs on the owning
  /// actor; a state bound to a cache entry fetches the page through the entry, for every state bound to it.
  ///
  /// ```swift
  /// actor FeedService {
  ///   @IsolatedLoadable var feed: LoadableState<Pages<String, Int>> = .loaded(Pages(items: ["a"], nextCursor: 1))
  ///
  ///   func more() {
  ///     $feed.loadMore { cursor in Pages(items: ["page \(cursor)"], nextCursor: nil) }
  ///   }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - priority: The priority of the load's task.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Fetches the page at the cursor it is given.
  /// - Returns: The load's task; it ends at once when the call does nothing.
  @discardableResult
  public func loadMore<Item, Cursor>(
    options: LoadOptions? = nil,
    priority: TaskPriority? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping (_ cursor: Cursor) async throws -> Pages<Item, Cursor>
  ) -> Task<Void, Never> where Value == Pages<Item, Cursor> {
    storage.startLoadMore(options: options, priority: priority, isolation: isolation, block: block)
  }

  /// Loads the next page of a list and appends it, and returns when the load (or the `loadMore` it joined) has ended
  /// and the state shows it; at once when it does nothing. See the Task form.
  ///
  /// ```swift
  /// await $feed.loadMore { cursor in try await api.posts(after: cursor) }
  /// ```
  ///
  /// - Parameters:
  ///   - options: The load's options; `nil`: the declaration's.
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - block: Fetches the page at the cursor it is given.
  public consuming func loadMore<Item, Cursor>(
    options: LoadOptions? = nil,
    isolation: isolated (any Actor) = #isolation,
    block: nonisolated(nonsending) @escaping (_ cursor: Cursor) async throws -> Pages<Item, Cursor>
  ) async where Value == Pages<Item, Cursor> {
    let task = storage.startLoadMore(options: options, priority: nil, isolation: isolation, block: block)
    _ = consume self  // waits without keeping the state alive
    await waitForMirrored(task)
  }
}

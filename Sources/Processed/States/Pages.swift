/// A list loaded page by page: the items so far and the cursor of the next page (`nil` when there is none).
///
/// Hold it in a loadable state, load the first page with `load` or `refresh`, and append the following ones with
/// ``LoadableController/loadMore(options:priority:block:)``:
///
/// ```swift
/// @Loadable var feed: LoadableState<Pages<String, Int>>
///
/// func open() {
///   $feed.load { Pages(items: try await api.posts(page: 0), nextCursor: 1) }
/// }
///
/// func reachedBottom() {
///   $feed.loadMore { page in
///     let posts = try await api.posts(page: page)
///     return Pages(items: posts, nextCursor: posts.isEmpty ? nil : page + 1)
///   }
/// }
/// ```
///
/// See <doc:LoadingPageByPage>.
public struct Pages<Item: Sendable, Cursor: Sendable>: Sendable {
  /// The items of every page loaded so far, in order.
  public var items: [Item]
  /// The cursor that asks for the next page; `nil`: there are no more pages.
  public var nextCursor: Cursor?

  /// Whether there is a next page (``nextCursor`` is not `nil`).
  ///
  /// ```swift
  /// if pages.hasMore { showSpinnerRow() }
  /// ```
  public var hasMore: Bool { nextCursor != nil }

  /// Creates a list of `items` whose next page is asked for with `nextCursor`.
  ///
  /// ```swift
  /// let first = Pages(items: ["a", "b"], nextCursor: 2)
  /// let last = Pages(items: ["y", "z"], nextCursor: nil)
  /// ```
  ///
  /// - Parameters:
  ///   - items: The items.
  ///   - nextCursor: The cursor of the next page; `nil` when there is none.
  public init(items: [Item] = [], nextCursor: Cursor?) {
    self.items = items
    self.nextCursor = nextCursor
  }
}

extension Pages: Equatable where Item: Equatable, Cursor: Equatable {}
extension Pages: Hashable where Item: Hashable, Cursor: Hashable {}
/// A paged list of `Codable` items can be kept between launches (``CacheKey/persisted()``). A restored list shows the
/// pages that were stored; its refetch loads the first page again (how the later pages were fetched is not stored).
extension Pages: Codable where Item: Codable, Cursor: Codable {}

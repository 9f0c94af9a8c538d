/// How a list whose first page was fetched again gets its next pages again: a cache entry that holds a paged list
/// (``Pages``) keeps the last `loadMore`'s one, so that a background refetch — an invalidation, the end of a mutation,
/// a stale hit — fetches every page it had loaded, in order, and writes the list once.
@MainActor
final class PageRefill<Value> {
  /// Fetches up to `count` pages after those of `first`, appending each; stops early when a page has no next cursor.
  let more: @MainActor (_ first: Value, _ count: Int) async throws -> Value

  init<Item, Cursor>(_ block: @escaping @MainActor (Cursor) async throws -> Pages<Item, Cursor>)
  where Value == Pages<Item, Cursor> {
    more = { first, count in
      var pages = first
      for _ in 0..<count {
        guard let cursor = pages.nextCursor else { break }
        let page = try await block(cursor)
        pages = Pages(items: pages.items + page.items, nextCursor: page.nextCursor)
      }
      return pages
    }
  }
}

/// A ``CacheKey``'s components as the key holds them: one or two in place, more in an array. Building the common
/// key (`CacheKey<User>("user", id)`) allocates nothing, so a fresh hit that builds its key in the call stays cheap.
///
/// The cache stores keys in the compact form, ``CacheKeyComponents`` (one array a key's index edges share), made
/// when a key reaches the cache's tables; a fresh hit compares the two forms without making one.
@usableFromInline
enum CacheKeyParts: Hashable, Sendable {
  case one(CacheKeyComponent)
  case two(CacheKeyComponent, CacheKeyComponent)
  /// Three or more (never fewer: a key's layout depends only on its number of components, so that equal keys have
  /// equal layouts and the synthesized `==` and `hash(into:)` agree with the components').
  case many(CacheKeyComponents)

  /// The components as the cache stores them (one allocation for a key of one or two components).
  @usableFromInline
  var components: CacheKeyComponents {
    switch self {
    case .one(let first): CacheKeyComponents(items: [first])
    case .two(let first, let second): CacheKeyComponents(items: [first, second])
    case .many(let components): components
    }
  }

  /// Whether `stored` (a key as the cache stores it) has exactly these components.
  @inlinable @inline(__always)
  func matches(_ stored: CacheKeyComponents) -> Bool {
    switch self {
    case .one(let first):
      return stored.items.count == 1 && stored.items[0] == first
    case .two(let first, let second):
      return stored.items.count == 2 && stored.items[0] == first && stored.items[1] == second
    case .many(let components):
      return components == stored
    }
  }
}

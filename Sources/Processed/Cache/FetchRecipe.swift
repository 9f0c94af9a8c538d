/// How a cache entry fetches, and how its last fetch failed: kept out of line, made when a state first binds or a
/// fetch fails, so that an entry holding only a value (`set` with no state bound) stays small.
// `@exclusivity(unchecked)` fields: main actor, short accesses (Unsafe/README.md, invariant 1).
@usableFromInline @MainActor
final class FetchRecipe<Value: Sendable> {
  /// The block and options of the last fetch, or of the last call that bound a state before any fetch (what
  /// `invalidate` runs).
  @usableFromInline @exclusivity(unchecked) var block: (@MainActor () async throws -> Value)?
  /// `nil`: `.default`.
  @usableFromInline @exclusivity(unchecked) var options: LoadOptions?
  /// Whether the entry has fetched (then a binding call no longer replaces the block).
  @usableFromInline @exclusivity(unchecked) var hasFetched = false
  /// The last fetch's error, cleared by a value.
  @usableFromInline @exclusivity(unchecked) var lastError: (any Error)?

  @inlinable
  init() {}
}

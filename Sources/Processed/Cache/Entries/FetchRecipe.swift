/// A cache entry's fetch options and its last fetch's error: kept out of line, made when a call gives options or a
/// fetch fails, so that an entry holding only a value (`set` with no state bound) stays small.
// `@exclusivity(unchecked)` fields: main actor, short accesses (Unsafe/README.md, invariant 1).
@usableFromInline @MainActor
final class FetchRecipe {
  /// The options of the last fetch, or of the last call that bound a state before any fetch (what `invalidate`
  /// fetches with, beside the entry's `block`); `nil`: `.default`.
  @usableFromInline @exclusivity(unchecked) var options: LoadOptions?
  /// The last fetch's error, cleared by a value.
  @usableFromInline @exclusivity(unchecked) var lastError: (any Error)?

  init() {}
}

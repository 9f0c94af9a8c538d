/// What the app told a ``LoadCache`` about its surroundings: whether it is focused and online (both start `true`).
@usableFromInline
struct CacheEnvironment: Sendable, Equatable {
  var isFocused = true
  @usableFromInline var isOnline = true
}

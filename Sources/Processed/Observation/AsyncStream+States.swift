extension AsyncStream where Element: Sendable {
  /// The stream behind every face's `states`: `current`, then every value the observer that `register` adds is
  /// called with, in order, never dropped or coalesced; it ends when the registry ends, and the observer is removed
  /// when the iteration ends.
  ///
  /// `register` gets the registry's end handler and the observer, and returns the observer's token.
  static func states(
    startingWith current: Element,
    register: (
      _ onRegistryEnd: @escaping @Sendable () -> Void, _ onChange: @escaping @Sendable (Element) -> Void
    ) -> ObservationToken
  ) -> AsyncStream<Element> {
    let (stream, continuation) = AsyncStream<Element>.makeStream()
    continuation.yield(current)
    let token = register({ continuation.finish() }) { continuation.yield($0) }
    continuation.onTermination = { _ in token.cancel() }
    return stream
  }
}

/// One observer's handler, behind a non-generic interface, so that registering and cancelling are plain code.
///
/// A class rather than a closure: a notification calls it through an unretained reference (the snapshot keeps it
/// alive), which a closure loaded from an array does not allow — each call would retain and release its context.
@usableFromInline
class ObserverCall {
  /// Set once, under the slot's lock, before the call is published to a snapshot.
  @usableFromInline @exclusivity(unchecked) final var id: UInt64 = 0

  @usableFromInline
  init() {}

  /// Called when the registry goes away while the observer is still registered.
  func registryDidEnd() {}
}

/// An observer of `Value`s. A notification, specialized for `Value` in the client, calls `handler` directly.
@usableFromInline
class TypedObserverCall<Value>: ObserverCall {
  @usableFromInline final let handler: @MainActor (Value) -> Void

  @inlinable
  init(_ handler: @escaping @MainActor (Value) -> Void) {
    self.handler = handler
    super.init()
  }
}

/// An observer with an end-of-registry hook (an `AsyncStream` finishes there).
@usableFromInline
final class EndingObserverCall<Value>: TypedObserverCall<Value> {
  @usableFromInline let onRegistryEnd: @Sendable () -> Void

  @inlinable
  init(_ handler: @escaping @MainActor (Value) -> Void, onRegistryEnd: @escaping @Sendable () -> Void) {
    self.onRegistryEnd = onRegistryEnd
    super.init(handler)
  }

  override func registryDidEnd() { onRegistryEnd() }
}

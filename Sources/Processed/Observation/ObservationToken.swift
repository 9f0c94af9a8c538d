/// Keeps an observer registered; cancel it, or let it go, to stop observing.
///
/// Tokens come from ``ObservableModel/observe(_:isolation:_:)`` and from the `observe(_:)` method of a `@Loadable` or
/// `@Process` controller. Releasing the last reference to a token cancels it, so keep tokens for as long as you
/// want to hear about changes — usually in a `Set<ObservationToken>` owned by the observing object.
///
/// ```swift
/// var tokens = Set<ObservationToken>()
/// model.observe(\.numbers) { state in print(state) }.store(in: &tokens)
/// tokens.removeAll()  // stops observing
/// ```
///
/// - `cancel()` may be called from any thread, any number of times, also from inside the observer's own handler.
/// - After `cancel()` returns, the handler is never called again. When its property's observers are being notified
///   on the main actor while `cancel()` runs on another thread, `cancel()` waits until that notification ends — so a
///   handler must not block waiting for a thread that cancels a token of the same property.
/// - A token that outlives its registry (its model was deallocated) stays valid; cancelling it does nothing.
public final class ObservationToken: Hashable, Sendable {
  // The slot, not the registry: a token keeps its slot alive, never the registry or its model. When the registry
  // goes away it closes its slots, which drops every observer; cancelling afterwards finds nothing.
  // `nonisolated(unsafe)`: a slot is thread-safe (see `ObserverSlot`).
  private nonisolated(unsafe) let slot: ObserverSlot
  private let id: UInt64

  @usableFromInline
  init(slot: ObserverSlot, id: UInt64) {
    self.slot = slot
    self.id = id
  }

  deinit { cancel() }

  /// A token that observes nothing (for a controller whose model is gone): its slot is closed at once.
  @MainActor
  static var inert: ObservationToken {
    let slot = ObserverSlot.make()
    let token = SlotLink(slot).addObserver { (_: Void) in }
    slot.close()
    return token
  }

  /// Stops the observation. Idempotent and thread-safe; after it returns the handler is never called again.
  public func cancel() {
    slot.remove(id: id)
  }

  /// Keeps this token in `set`, so that it lives — and the observation goes on — as long as the set holds it.
  ///
  /// ```swift
  /// $numbers.observe { print($0) }.store(in: &tokens)
  /// ```
  ///
  /// - Parameter set: The set that will own the token.
  public func store(in set: inout Set<ObservationToken>) {
    set.insert(self)
  }

  /// Tokens are equal only to themselves.
  public static func == (lhs: ObservationToken, rhs: ObservationToken) -> Bool { lhs === rhs }

  /// Hashes the token's identity.
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

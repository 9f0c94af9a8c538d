/// What the wrappers and controllers of an actor-owned state hold: its storage, for as long as one of them exists.
///
/// A running load holds the storage, not this handle. So when the last copy of a wrapper and the last controller a
/// caller kept go away — a standalone `IsolatedLoadable` local to an actor method that returned — the state's running
/// load is cancelled and its `states` end, as when a main-actor wrapper's storage goes away.
@usableFromInline
final class IsolatedStateHandle<State: ManagedState & Sendable> {
  @usableFromInline let storage: IsolatedStateStorage<State>

  @inlinable
  init(_ storage: IsolatedStateStorage<State>) {
    self.storage = storage
  }

  deinit {
    storage.lastHandleWentAway()
  }
}

/// The reference to an actor-owned state's storage that a load's task-local context holds, for
/// ``LoadProgress/report(fraction:message:isolation:)``, which any code of the task may call, on any isolation.
///
/// Invariant: `storage` is not `Sendable`; it is touched only after checking that the report runs on the actor
/// instance that owns it (the caller's `isolation` is that actor). A report from anywhere else is dropped, so only the
/// owner ever touches the storage.
@usableFromInline
final class OwnedStorageReference<State: ManagedState & Sendable>: ProgressSink {
  private nonisolated(unsafe) let storage: IsolatedStateStorage<State>
  private let owner: any Actor

  @usableFromInline
  init(_ storage: IsolatedStateStorage<State>, owner: any Actor) {
    self.storage = storage
    self.owner = owner
  }

  @usableFromInline
  func reportProgress(_ progress: LoadProgress, from id: UInt64, isolation: isolated (any Actor)?) {
    guard let isolation, isolation === owner else { return }
    storage.reportProgress(progress, from: id)
  }
}

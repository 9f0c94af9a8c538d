/// The reference to an actor-owned state's storage that code outside the owner's static isolation holds: the load's
/// progress reports (``LoadProgress/report(fraction:message:isolation:)``) and its block's `yield`, whose types carry no
/// isolation.
///
/// Invariant: `storage` is not `Sendable`; it is touched only after checking that the caller runs on the actor that
/// owns it — a report compares the caller's `isolation` with the owner instance and drops a report from anywhere else;
/// a `yield` checks the owner's executor and stops with a message when it is called elsewhere. So only the owner's
/// executor ever touches the storage.
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

  /// A `yield` of load `id`: writes `state` while the load may still write.
  @usableFromInline
  func yield(_ state: State, from id: UInt64) {
    owner.preconditionIsolated("Processed: a yielding block of an actor-owned state called yield off its actor")
    if storage.mayWrite(id) { storage.store(state) }
  }
}

/// The task that writes an entry's outcome held for a waiting state's minimum loading time (see
/// `CacheBinding.deliver`), shared by the binding and the waiting load's block without a weak reference.
@usableFromInline @MainActor
final class HeldOutcome {
  @usableFromInline var task: Task<Void, Never>?

  @usableFromInline
  init() {}
}

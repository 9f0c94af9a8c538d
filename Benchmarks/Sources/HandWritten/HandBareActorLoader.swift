// The bare hand-written baseline of an actor-owned load: the same job as `HandActorLoader` without its observer and
// without a cancellation handler on the awaited form — what a quick hand-written actor looks like, and what an
// independent side-by-side measurement compared against (issue #40).
import Processed

/// A loading state owned by an actor (default executor): the state, a generation counter and the current task.
///
/// A load cancels the previous task, bumps the generation and writes `.loading`, then starts a task isolated to the
/// actor that runs the block and writes `.loaded(value)` only if it is still the latest load and was not cancelled.
/// No observer is called, and the awaited form awaits the task without forwarding the caller's cancellation.
public actor HandBareActorLoader {
  /// The loading state.
  public var state: LoadableState<Int> = .absent
  @usableFromInline var generation: UInt64 = 0
  @usableFromInline var task: Task<Void, Never>?

  /// A loader in the `.absent` state.
  @inlinable
  public init() {}

  /// Starts a load of the value `block` returns and returns its task; only the latest load writes its value.
  @inlinable @discardableResult
  public func start(_ block: @escaping () async -> Int) -> Task<Void, Never> {
    task?.cancel()
    generation &+= 1
    state = .loading
    let task = Task { [generation] in
      let value = await block()
      guard self.generation == generation, !Task.isCancelled else { return }
      self.state = .loaded(value)
    }
    self.task = task
    return task
  }

  /// `loads` cycles, each `await start { i }.value`, on the actor.
  @inlinable
  public func cycles(_ loads: Int) async {
    for i in 0..<loads { await start { i }.value }
  }
}

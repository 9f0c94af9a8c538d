// The hand-written baseline of an actor-owned load: what a careful engineer writes for `@IsolatedLoadable` in an
// actor of their own. `@inlinable`, like the rest of HandWritten, so that it is specialized into the benchmark.
import Processed

/// A loading state owned by an actor (default executor): the state, a generation counter, the current task and one
/// observer closure, all on the actor.
///
/// A load cancels the previous task, bumps the generation, writes `.loading` and calls the observer, then starts a
/// task isolated to the actor that runs the block and writes `.loaded(value)` (and calls the observer) only if it is
/// still the latest load and was not cancelled. Extensions in the benchmark run their loops on the actor, as an
/// actor's own methods would.
public actor HandActorLoader {
  /// The loading state.
  public var state: LoadableState<Int> = .absent
  @usableFromInline var generation: UInt64 = 0
  @usableFromInline var task: Task<Void, Never>?
  /// Called on the actor after every write of `state`.
  @usableFromInline let observer: (LoadableState<Int>) -> Void

  /// A loader in the `.absent` state whose writes call `observer`.
  @inlinable
  public init(observer: @escaping @Sendable (LoadableState<Int>) -> Void) {
    self.observer = observer
  }

  @inlinable
  func write(_ newState: LoadableState<Int>) {
    state = newState
    observer(newState)
  }

  /// Starts a load of the value `block` returns and returns its task; only the latest load writes its value.
  @inlinable @discardableResult
  public func start(_ block: @escaping () async -> Int) -> Task<Void, Never> {
    task?.cancel()
    generation &+= 1
    write(.loading)
    let task = Task { [generation] in
      let value = await block()
      guard self.generation == generation, !Task.isCancelled else { return }
      self.write(.loaded(value))
    }
    self.task = task
    return task
  }

  /// Loads the value `block` returns and waits for the load's task. Cancelling the caller cancels the load, as a
  /// cancellable `async` load must (the job `IsolatedLoadableController`'s `async` form does).
  @inlinable
  public func load(_ block: @escaping () async -> Int) async {
    let task = start(block)
    await withTaskCancellationHandler {
      await task.value
    } onCancel: {
      task.cancel()
    }
  }
}

/// A load an `async` caller waits for. It holds the load's task only, never its host.
@usableFromInline
struct AwaitedLoad: Sendable {
  @usableFromInline let task: Task<Void, Never>
  /// Whether cancelling the caller cancels the load (see `StateHost.startAwaited`).
  @usableFromInline let forwardsCancellation: Bool

  @inlinable
  init(task: Task<Void, Never>, forwardsCancellation: Bool) {
    self.task = task
    self.forwardsCancellation = forwardsCancellation
  }

  /// Returns when the load ends. Cancelling the calling task cancels the load.
  ///
  /// Main-actor isolated like its callers: a nonisolated `async` function would hop off the main actor to wait and
  /// back again after, two executor switches per `async` load.
  @inlinable @MainActor
  func wait() async {
    guard forwardsCancellation else {
      await task.value
      return
    }
    let task = self.task
    await withTaskCancellationHandler {
      await task.value
    } onCancel: {
      task.cancel()
    }
  }
}

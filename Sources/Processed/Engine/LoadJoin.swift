/// A call with ``OverlapPolicy/joinRunning`` made while a load is in progress: it waits for that load instead of
/// starting one.
@usableFromInline
enum LoadJoin {
  /// Returns when the load in progress ends — its host's tracker forgets it, on every path (it finished; it was
  /// cancelled, reset, overwritten or superseded; its wrapper storage went away), and signals `ended` — or at once
  /// when the calling task is cancelled. Cancelling a joining call never cancels the load it joined.
  @usableFromInline
  static func wait(until ended: FirstSignal<Bool>, isolation: isolated (any Actor)? = #isolation) async {
    // Ended already: no cancellation handler to install and remove.
    if ended.sent != nil { return }
    await withTaskCancellationHandler {
      _ = await ended.wait(isolation: isolation)
    } onCancel: {
      ended.signal(false)
    }
  }
}

// expect: capture of 'controller' with non-Sendable type 'IsolatedLoadableController<Int>' in a '@Sendable' closure
// (c, @Sendable) The controller is captured by a `@Sendable` closure, which may run anywhere.
import Processed

actor FeedService {
  @IsolatedLoadable var feed: LoadableState<Int> = .absent

  func escape() -> @Sendable () -> Void {
    let controller = $feed
    return {
      _ = controller.state
    }
  }
}

// expect: passing closure as a 'sending' parameter risks causing data races between 'self'-isolated code and concurrent execution of the closure
// expect-note: closure captures 'controller' which is accessible to 'self'-isolated code
// (c) The controller is captured by a detached task, which would drive it off the actor.
import Processed

actor FeedService {
  @IsolatedLoadable var feed: LoadableState<Int> = .absent

  func escape() {
    let controller = $feed
    Task.detached {
      _ = controller.state
    }
  }
}

// expect: conformance of 'IsolatedLoadableController<Value>' to 'Sendable' is unavailable: an actor-owned state's controller stays inside its actor
// (e) A generic function that requires `Sendable` is given the controller: the unavailable conformance and its message.
import Processed

func keep<T: Sendable>(_ value: T) {}

actor FeedService {
  @IsolatedLoadable var feed: LoadableState<Int> = .absent

  func share() {
    keep($feed)
  }
}

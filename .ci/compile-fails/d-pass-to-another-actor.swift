// expect: sending 'self.$feed' risks causing data races
// expect-note: sending 'self'-isolated 'self.$feed' to actor-isolated instance method 'take' risks causing data races
// (d) The controller is passed to another actor's method.
import Processed

actor Other {
  func take(_ controller: IsolatedLoadableController<Int>) {
    controller.cancel()
  }
}

actor FeedService {
  @IsolatedLoadable var feed: LoadableState<Int> = .absent

  func handOver(to other: Other) async {
    await other.take($feed)
  }
}

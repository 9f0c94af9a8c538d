// expect: success
// The positive control: an actor drives its own states, and the blocks and observers touch its state synchronously.
// If this stops type-checking, the setup is broken and the failures below prove nothing.
import Processed

actor FeedService {
  @IsolatedLoadable var feed: LoadableState<Int> = .absent
  @IsolatedProcess var job: ProcessState<SingleProcess> = .idle
  var fetches = 0
  var seen: [LoadableState<Int>] = []
  var tokens: [ObservationToken] = []

  func start() async {
    tokens.append(
      $feed.observe { state in
        self.seen.append(state)  // the actor's own state, no `await`
      })
    await $feed.load {
      self.fetches += 1
      return self.fetches
    }
    await $job.run { self.fetches += 1 }
    let current: LoadableState<Int> = feed
    feed = current
    _ = $feed.state
  }

  func refreshNow() {
    $feed.refresh { self.fetches }  // the task form, from a synchronous method
    $job.cancel()
  }
}

func drive(_ service: FeedService) async {
  await service.start()
  await service.refreshNow()
}

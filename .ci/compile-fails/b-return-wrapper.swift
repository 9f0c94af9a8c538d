// expect: non-Sendable 'IsolatedLoadable<Int>'-typed result can not be returned
// (b) An actor method hands the property wrapper itself to a nonisolated caller.
import Processed

actor FeedService {
  @IsolatedLoadable var feed: LoadableState<Int> = .absent

  func wrapper() -> IsolatedLoadable<Int> { _feed }
}

func leak(_ service: FeedService) async {
  let wrapper = await service.wrapper()
  _ = wrapper
}

// expect: non-Sendable 'IsolatedLoadableController<Int>'-typed result can not be returned
// (a) An actor method hands its state's controller to a nonisolated caller.
import Processed

actor FeedService {
  @IsolatedLoadable var feed: LoadableState<Int> = .absent

  func controller() -> IsolatedLoadableController<Int> { $feed }
}

func leak(_ service: FeedService) async {
  let controller = await service.controller()
  _ = controller
}

// expect: non-Sendable 'IsolatedProcessController<SingleProcess>'-typed result can not be returned
// (a, process) An actor method hands its process's controller to a nonisolated caller.
import Processed

actor Uploader {
  @IsolatedProcess var upload: ProcessState<SingleProcess> = .idle

  func controller() -> IsolatedProcessController<SingleProcess> { $upload }
}

func leak(_ uploader: Uploader) async {
  let controller = await uploader.controller()
  _ = controller
}

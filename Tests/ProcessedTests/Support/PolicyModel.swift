import Processed

/// A model for the load policies: wrappers, a process and plain key-path states.
@MainActor
final class PolicyModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  @Loadable var results: LoadableState<Int>
  @Processed.Process var save
  var keyPathResults: LoadableState<Int> = .absent
  var keyPathSave: SingleProcessState = .idle
}

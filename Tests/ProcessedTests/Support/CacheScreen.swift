@testable import Processed

/// A screen of the cache suites: a wrapper state (`$number`) and a plain key-path state (`\.plain`), reachable through
/// every face (`$number`, `load(\.plain, …)`, `loadables.number`).
@MainActor
final class CacheScreen: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  @Loadable var number: LoadableState<Int>
  var plain: LoadableState<Int> = .absent
}

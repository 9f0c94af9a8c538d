import Testing

@testable import Processed

/// Records every value an observer receives, in order.
@MainActor
final class Recorder<Value> {
  private(set) var values: [Value] = []
  var token: ObservationToken?

  init() {}

  func record(_ value: Value) { values.append(value) }

  /// Waits (yielding to the main actor) until `count` values were recorded, or fails after `timeout`.
  func wait(
    forCount count: Int, timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while values.count < count {
      if clock.now > deadline {
        Issue.record("timed out waiting for \(count) values; have \(values.count)", sourceLocation: sourceLocation)
        return
      }
      try? await Task.sleep(for: .milliseconds(1))
    }
  }
}

extension Recorder {
  /// Records the changes of a `@Loadable` state.
  convenience init<V>(_ controller: LoadableController<V>) where Value == LoadableState<V> {
    self.init()
    token = controller.observe { [unowned self] in self.record($0) }
  }

  /// Records the changes of a `@Process` state.
  convenience init<K>(_ controller: ProcessController<K>) where Value == ProcessState<K> {
    self.init()
    token = controller.observe { [unowned self] in self.record($0) }
  }
}

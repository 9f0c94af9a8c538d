import Testing

@testable import Processed

/// Records every value an observer receives, in order.
@MainActor
final class Recorder<Value> {
  private(set) var values: [Value] = []
  var token: ObservationToken?
  private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

  init() {}

  func record(_ value: Value) {
    values.append(value)
    let count = values.count
    let ready = waiters.filter { $0.count <= count }
    waiters.removeAll { $0.count <= count }
    for waiter in ready { waiter.continuation.resume() }
  }

  /// Suspends until `count` values were recorded — resumed by the recording itself, no polling — or records an
  /// issue at the ``SafetyLimit`` (so that a bug fails instead of hanging).
  func wait(
    forCount count: Int, timeout: Duration = SafetyLimit.standard, sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    if values.count >= count { return }
    let limit = SafetyLimit.start(timeout) { [weak self] in
      guard let self else { return }
      Issue.record("timed out waiting for \(count) values; have \(self.values.count)", sourceLocation: sourceLocation)
      let pending = self.waiters.filter { $0.count == count }
      self.waiters.removeAll { $0.count == count }
      for waiter in pending { waiter.continuation.resume() }
    }
    await withCheckedContinuation { waiters.append((count, $0)) }
    limit.cancel()
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

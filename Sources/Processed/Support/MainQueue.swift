import Dispatch

/// Whether code runs on the main dispatch queue, where the main actor runs (on Apple platforms, and on Linux, where
/// the queue may be drained by a thread other than the process's first): a `deinit`, which may run anywhere, does its
/// main-actor work at once there. With a custom main executor it answers `false`, and that work is queued instead.
@usableFromInline
enum MainQueue {
  /// A key set on the main queue only, by the static's lazy initializer (which the runtime runs once).
  private static let key: DispatchSpecificKey<Bool> = {
    let key = DispatchSpecificKey<Bool>()
    DispatchQueue.main.setSpecific(key: key, value: true)
    return key
  }()

  @usableFromInline
  static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}

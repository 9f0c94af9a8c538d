/// What a load that waits for the network asks of whoever knows the network (a cache's entry, for its fetch under
/// ``NetworkMode/online``): the engine names no cache type.
///
/// Asked before each attempt (``LoadPhases/Phase/waitingForNetwork(_:)``), so a paused load holds no limiter permit
/// and no timeout runs while it waits.
@MainActor @usableFromInline
protocol NetworkGate: AnyObject {
  /// Whether the network is up now.
  var isOnline: Bool { get }
  /// Returns `true` once the network is up, or `false` when the calling task is cancelled first (or the gate closes).
  func waitUntilOnline() async -> Bool
  /// The load waiting here paused (`true`) or goes on (`false`): the gate tells the states that wait for it.
  func loadPaused(_ paused: Bool)
}

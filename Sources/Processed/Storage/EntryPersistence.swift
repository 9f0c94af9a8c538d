/// What an entry of a persisted key keeps: how its key is stored, and where its restore is (an entry made by the
/// first load of a persisted key reads its record before anything else happens to it).
@usableFromInline @MainActor
final class EntryPersistence<Value: Sendable> {
  enum Restore {
    /// The record has not been read: the next load reads it.
    case needed
    /// The record is being read: loads meanwhile wait in ``waiters``.
    case reading
    /// Read, or not needed (the entry was written first).
    case done
  }

  let key: KeyPersistence<Value>
  var restore: Restore
  /// The loads waiting for the read, one signal each (a signal has one waiter).
  var waiters: [FirstSignal<Bool>] = []

  init(key: KeyPersistence<Value>, restoring: Bool) {
    self.key = key
    restore = restoring ? .needed : .done
  }

  /// The read ended: every load waiting for it goes on.
  func readEnded() {
    restore = .done
    let ended = waiters
    waiters = []
    for index in ended.indices { ended[index].signal(true) }
  }

  /// Whether a load must wait for the record before it acts.
  var isRestoring: Bool {
    if case .done = restore { return false }
    return true
  }
}

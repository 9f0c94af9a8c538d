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

  /// The read ended: the loads waiting for it go on one after another, in the order they came (see ``resumeNext()``).
  func readEnded() {
    restore = .done
    resumeNext()
  }

  /// Lets the next waiting load go on, once the read ended: called by the read, then by each load that went on, just
  /// before it acts — so loads act in the order they were called, whatever order the runtime resumes their tasks in.
  /// A waiter whose task was cancelled meanwhile was let go already (its signal was sent): the next one goes instead.
  func resumeNext() {
    guard case .done = restore else { return }
    while !waiters.isEmpty {
      if waiters.removeFirst().signal(true) { return }
    }
  }

  /// Whether a load must wait for the record before it acts.
  var isRestoring: Bool {
    if case .done = restore { return false }
    return true
  }
}

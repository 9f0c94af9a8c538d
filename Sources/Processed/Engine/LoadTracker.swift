/// The bookkeeping of the load that currently owns one state: its identity and its task.
///
/// Ids come from one main-actor counter and are never reused, so a stale load can always tell it is no longer current.
@usableFromInline
struct LoadTracker: Sendable {
  /// The current load's id; `0` when no load runs.
  @usableFromInline private(set) var currentID: UInt64 = 0
  /// The current load's task.
  @usableFromInline private(set) var task: Task<Void, Never>?
  /// Calls that joined the current load (`.joinRunning`), told when it ends.
  @usableFromInline var joiners: [FirstSignal<Bool>] = []
  /// The current load's place in its limiter's queue, until its task claims it: withdrawn when the load stops first,
  /// so that a load superseded, cancelled or reset before its task ran leaves the queue at once.
  @usableFromInline var reservation: (limiter: LoadLimiter, ticket: PermitTicket)?
  /// The current load's start state on screen, for a load with calm-presentation options; `nil` for every other load.
  @usableFromInline var screen: StartOnScreen?
  /// Whether the current load is a `loadMore`, which a later `loadMore` joins.
  @usableFromInline var isLoadingMore = false

  /// Main-actor only, read and bumped in one short access: no dynamic exclusivity check.
  @usableFromInline @MainActor @exclusivity(unchecked) static var lastID: UInt64 = 0

  @inlinable
  init() {}

  /// A fresh id, distinct from every earlier one.
  @inlinable @MainActor
  static func nextID() -> UInt64 {
    lastID &+= 1
    return lastID
  }

  @inlinable
  var isRunning: Bool { currentID != 0 }

  @inlinable
  func isCurrent(_ id: UInt64) -> Bool { currentID == id }

  /// Whether load `id` may still write: it is current and the task running this code is not cancelled.
  @inlinable
  func mayWrite(_ id: UInt64) -> Bool { currentID == id && !Task.isCancelled }

  /// How load `id` ends, called by its task when its last attempt returned.
  @inlinable
  func ending(_ id: UInt64) -> LoadEnding {
    guard currentID == id else { return .superseded }
    return Task.isCancelled ? .cancelled : .writesOutcome
  }

  /// Whether a `.joinRunning` call joins the current load: one runs, it is not a `loadMore` (which such a call
  /// supersedes), and its task was not cancelled (through the `Task` its call returned, or its `async` caller), so
  /// that it can still write.
  @inlinable
  var isJoinable: Bool { isRunning && !isLoadingMore && task?.isCancelled != true }

  /// A call joins the current load: the signal it waits for is sent when the load ends (``clear()``).
  @inlinable
  mutating func join() -> FirstSignal<Bool> {
    let ended = FirstSignal<Bool>()
    joiners.append(ended)
    return ended
  }

  @inlinable
  mutating func begin(_ id: UInt64, task: Task<Void, Never>?) {
    currentID = id
    self.task = task
  }

  /// Forgets the current load and returns its task (which the caller may cancel). Calls that joined it end now; its
  /// pending start state is never written.
  @inlinable
  mutating func clear() -> Task<Void, Never>? {
    defer {
      currentID = 0
      task = nil
      isLoadingMore = false
    }
    if !joiners.isEmpty {
      let ended = joiners
      joiners = []
      for joiner in ended { joiner.signal(true) }
    }
    if let reservation {
      self.reservation = nil
      reservation.limiter.withdraw(reservation.ticket)
    }
    if let screen {
      self.screen = nil
      screen.end()
    }
    return task
  }
}

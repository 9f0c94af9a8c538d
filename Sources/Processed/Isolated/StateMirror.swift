/// How an actor-owned state uses what runs on the main actor — a ``LoadCache`` entry, `loadMore`, calm presentation —
/// without a copy of the engine: a main-actor replica of the state (its *shadow*, a wrapper's storage) runs the load
/// with the main engine, and every change of the shadow (state and activity) is sent to the owner, in the order it
/// happened, through a mailbox the owner drains. See Documentation/IsolatedLoads.md, "Cache, pages and calm
/// presentation".
///
/// Each operation of the owner that changes what the state follows has an *epoch*, counted on the owner. The shadow
/// runs an operation only when its epoch is not older than the last one it ran (operations travel to the main actor
/// in tasks, which may start out of order), and stamps each change it sends with the epoch it runs; the owner applies
/// a change only while it follows the mirror at that epoch. So a change made for an operation the owner has since
/// superseded (its own load, `cancel()`, `reset()`, a manual write, a newer cached load) is never written.
final class StateMirror<Value: Sendable>: Sendable {
  typealias State = LoadableState<Value>

  /// A change of the shadow, stamped with the epoch it was made for.
  enum Change: Sendable {
    /// A write; `version`: the entry's version of a `.loaded` value shown as the cache's (`0`: none).
    case state(State, version: UInt64)
    case activity(LoadActivity)
  }

  struct Mailbox: Sendable {
    var items: [(epoch: UInt64, change: Change)] = []
    /// Whether a drain on the owner is scheduled or running.
    var draining = false
    /// The state the changes go to; `nil` once the mirror is closed.
    var target: IsolatedStateStorage<State>?
    weak var owner: (any Actor)?
    /// How many changes were sent, and how many the owner has taken (applied or dropped).
    var sent: UInt64 = 0
    var taken: UInt64 = 0
    /// Callers waiting until the owner has taken every change sent before they asked.
    var waiters: [(upTo: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
  }

  let mailbox: LockedBox<Mailbox>

  /// The shadow, made on the first operation; `nil` once closed.
  @MainActor var shadow: StateStorage<State>?
  /// The epoch of the last operation the shadow ran.
  @MainActor var epoch: UInt64 = 0
  @MainActor var tokens: [ObservationToken] = []

  init(target: IsolatedStateStorage<State>, owner: isolated (any Actor)) {
    var mailbox = Mailbox()
    mailbox.target = target
    mailbox.owner = owner
    self.mailbox = LockedBox(mailbox)
  }

  // MARK: The main actor's side

  /// Runs `operation` on the shadow for the owner's operation `epoch`, and returns its task; `nil` when a newer
  /// operation already ran (or the mirror is closed). A newer epoch first makes the shadow show `seed` — the owner's
  /// state when it made the call — shown as the entry's value at `seedVersion` (`0`: not a cache value).
  @MainActor
  func run(
    _ epoch: UInt64, seed: State, seedVersion: UInt64,
    _ operation: @MainActor (LoadableController<Value>) -> Task<Void, Never>
  ) -> Task<Void, Never>? {
    guard epoch >= self.epoch, let shadow = shadowForRun() else { return nil }
    if epoch > self.epoch {
      self.epoch = epoch
      // The shadow follows the owner's state silently: the owner has written it already.
      shadow.currentState = seed
      if let binding = (shadow.keptCacheBinding() as StorageCacheBinding<Value>?) {
        binding.shownVersion = seed.isLoaded ? seedVersion : 0
      }
    }
    let controller = LoadableController(storage: shadow)
    let task = operation(controller)
    // The shadow's activity now, which the owner only guessed: an operation that started nothing changes none, and
    // its observer sends none — without this the owner would take a load for running that never started.
    send(.activity(controller.activity))
    return task
  }

  /// The owner stopped following the shadow (operation `epoch`: its own load, `cancel()`, `reset()`, a manual write):
  /// the shadow's load is cancelled and it leaves its cache entry.
  @MainActor
  func stop(_ epoch: UInt64) {
    guard epoch > self.epoch else { return }
    self.epoch = epoch
    if let shadow { LoadableController(storage: shadow).cancel() }
  }

  /// The state went away: the shadow goes (leaving its entry), and nothing more is sent.
  @MainActor
  func closeShadow() {
    for token in tokens { token.cancel() }
    tokens = []
    if let shadow { LoadableController(storage: shadow).cancel() }
    shadow = nil
  }

  @MainActor
  func shadowForRun() -> StateStorage<State>? {
    if let shadow { return shadow }
    guard mailbox.withLock({ $0.target != nil }) else { return nil }
    let made = StateStorage<State>(.absent)
    let controller = LoadableController(storage: made)
    // The shadow's observers are the mirror's way to the owner; they hold the mirror until it is closed.
    tokens = [
      controller.observe { [self] state in
        let version =
          state.isLoaded ? ((made.keptCacheBinding() as StorageCacheBinding<Value>?)?.entry?.version ?? 0) : 0
        send(.state(state, version: version))
      },
      controller.observeActivity { [self] activity in send(.activity(activity)) },
    ]
    shadow = made
    return made
  }

  /// Sends `change` to the owner, stamped with the current epoch.
  @MainActor
  func send(_ change: Change) {
    let stamped = epoch
    let owner = mailbox.withLock { mailbox -> (any Actor)?? in
      guard mailbox.target != nil else { return nil }
      mailbox.items.append((stamped, change))
      mailbox.sent &+= 1
      guard !mailbox.draining else { return nil }
      mailbox.draining = true
      return .some(mailbox.owner)
    }
    guard let owner else { return }
    guard let owner else {
      // The owner is gone: nothing will take the changes.
      closeMailbox()
      return
    }
    Self.scheduleDrain(self, on: owner)
  }

  /// Starts the owner's drain (from outside any actor: the task goes straight to the owner).
  nonisolated static func scheduleDrain(_ mirror: StateMirror, on owner: any Actor) {
    Task { await mirror.drain(isolation: owner) }
  }

  // MARK: The owner's side

  /// Applies every change sent so far, in order, on the owner.
  func drain(isolation: isolated (any Actor)) {
    while true {
      let (items, target) = mailbox.withLock {
        mailbox -> ([(epoch: UInt64, change: Change)], IsolatedStateStorage<State>?) in
        guard !mailbox.items.isEmpty else {
          mailbox.draining = false
          return ([], nil)
        }
        defer { mailbox.items = [] }
        return (mailbox.items, mailbox.target)
      }
      guard !items.isEmpty else { return }
      if let target {
        for item in items { target.applyMirrored(item.change, epoch: item.epoch) }
      }
      took(items.count)
    }
  }

  /// The owner took `count` changes: resumes the callers waiting for them.
  func took(_ count: Int) {
    let ready = mailbox.withLock { mailbox -> [CheckedContinuation<Void, Never>] in
      mailbox.taken &+= UInt64(count)
      let taken = mailbox.taken
      let ready = mailbox.waiters.filter { $0.upTo <= taken }.map(\.continuation)
      mailbox.waiters.removeAll { $0.upTo <= taken }
      return ready
    }
    for waiter in ready { waiter.resume() }
  }

  /// Returns once the owner has taken every change sent before this call (the final write of a load the caller
  /// waited for).
  func waitUntilDelivered() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let ready = mailbox.withLock { mailbox -> Bool in
        if mailbox.taken >= mailbox.sent || mailbox.target == nil { return true }
        mailbox.waiters.append((mailbox.sent, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  /// The state went away (or its owner did): nothing more is sent or applied, waiting callers return, and the shadow
  /// goes on the main actor. Any thread.
  func closeMailbox() {
    let waiters = mailbox.withLock { mailbox -> [CheckedContinuation<Void, Never>] in
      mailbox.target = nil
      mailbox.items = []
      mailbox.taken = mailbox.sent
      defer { mailbox.waiters = [] }
      return mailbox.waiters.map(\.continuation)
    }
    for waiter in waiters { waiter.resume() }
    Task { @MainActor in self.closeShadow() }
  }
}

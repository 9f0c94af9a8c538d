/// What an actor-owned state's storage asks of its ``StateMirror``, whatever its value type.
protocol MirrorLink: AnyObject, Sendable {
  /// The owner stopped following the shadow at `epoch` (sent to the main actor).
  func sendStop(_ epoch: UInt64)
  /// The state went away: nothing more is sent or applied. Any thread.
  func close()
}

extension StateMirror: MirrorLink {
  func close() { closeMailbox() }

  func sendStop(_ epoch: UInt64) {
    Task { @MainActor in self.stop(epoch) }
  }
}

/// The owner's side of a ``StateMirror``: following it, and writing what it sends.
extension IsolatedStateStorage {
  /// Stops following the mirror (the owner's own load, `cancel()`, `reset()`, a manual write): later changes it sends
  /// are not written, and the shadow's load is cancelled. `restoring`: a cancellation, which writes back what a load
  /// whose options restore on cancellation replaced, while that load still runs.
  @usableFromInline
  func unfollowMirror(restoring: Bool) {
    let wasRunning = mirroredActivity.map { $0.phase != .idle } ?? false
    followsMirror = false
    endMirrorJoiners()
    mirroredActivity = nil
    mirroredVersion = 0
    mirrorEpoch &+= 1
    mirror?.sendStop(mirrorEpoch)
    // As on the main actor: only a load that wrote its start state (the state still shows it) writes back what it
    // replaced; one still within its `loadingDelay`, or a refresh of a value, wrote nothing and writes nothing.
    if restoring, wasRunning, let replaced = mirrorRestores, state.isStartState, !replaced.isStartState {
      store(replaced)
    }
    mirrorRestores = nil
  }

  /// A change the mirror sent for operation `epoch`, on the owner: written while the state follows the mirror at that
  /// epoch. A value the state shows already as the entry's (its version) and a `.loading` it shows are not written
  /// again (no duplicate notification).
  func applyMirrored<Value>(_ change: StateMirror<Value>.Change, epoch: UInt64) where State == LoadableState<Value> {
    guard followsMirror, epoch == mirrorEpoch else { return }
    switch change {
    case .state(let new, let version):
      if new.isLoaded, version != 0, version == mirroredVersion, state.isLoaded { return }
      if new.isLoading, state.isLoading { return }
      mirroredVersion = new.isLoaded ? version : 0
      store(new)
    case .activity(let activity):
      mirroredActivity = activity
      if activity.phase == .idle { mirrorRestores = nil }
      publishActivity()
      if activity.phase == .idle { endMirrorJoiners() }
    }
  }

  /// Whether the state follows a load running through its mirror: the mirrored activity is not idle.
  var followsRunningMirror: Bool {
    followsMirror && mirroredActivity.map { $0.phase != .idle } ?? false
  }

  /// Whether a `.joinRunning` call joins the load the state follows through its mirror: one runs, and it is not a
  /// `loadMore`.
  @usableFromInline
  var mirroredLoadIsJoinable: Bool { followsRunningMirror && !mirrorLoadsMore }

  /// The load the state followed through its mirror ended, was superseded or stopped: the calls that joined it end.
  func endMirrorJoiners() {
    mirrorLoadsMore = false
    guard !mirrorJoiners.isEmpty else { return }
    let ended = mirrorJoiners
    mirrorJoiners = []
    for joiner in ended { joiner.signal(true) }
  }

  /// A `.joinRunning` call made while a load runs — the state's own, or one it follows through its mirror (a cached
  /// load's fetch, a calmly presented load): it starts and writes nothing, and returns a task that ends with that load.
  /// `nil`: no such load runs.
  @usableFromInline
  func joinRunningLoad(priority: TaskPriority?, isolation: isolated (any Actor)) -> Task<Void, Never>? {
    if tracker.isJoinable { return Self.waiting(for: tracker.join(), priority: priority, isolation: isolation) }
    guard mirroredLoadIsJoinable else { return nil }
    return joinFollowedLoad(priority: priority, isolation: isolation)
  }

  /// A call that joins the load the state follows through its mirror: a task that ends when that load ends, is
  /// superseded or stops (``endMirrorJoiners()``).
  func joinFollowedLoad(priority: TaskPriority?, isolation: isolated (any Actor)) -> Task<Void, Never> {
    let ended = FirstSignal<Bool>()
    mirrorJoiners.append(ended)
    return Self.waiting(for: ended, priority: priority, isolation: isolation)
  }

  /// The task of a joining call, isolated to the owner: it ends when `ended` is sent, or when it is cancelled.
  static func waiting(
    for ended: FirstSignal<Bool>, priority: TaskPriority?, isolation: isolated (any Actor)
  ) -> Task<Void, Never> {
    Task(priority: priority) {
      _ = isolation
      await LoadJoin.wait(until: ended)
    }
  }

  /// The state's mirror, made on first use.
  func stateMirror<Value>(isolation: isolated (any Actor)) -> StateMirror<Value>
  where State == LoadableState<Value> {
    if let mirror { return unsafeDowncast(mirror, to: StateMirror<Value>.self) }
    let made = StateMirror<Value>(target: self, owner: isolation)
    mirror = made
    return made
  }

  /// Runs `operation` on the state's shadow, on the main actor, and returns a task that ends once its load has ended
  /// and the owner has written its last change. Before it returns, on the owner: the state's own load is superseded
  /// (when `supersedes`), the state follows the mirror, and `guess` — what the shadow will write first, as far as the
  /// owner can tell — is written, with `activity`.
  ///
  /// `supersedes == false` (a `loadMore` of a state that follows its mirror already): the operation joins the mirror
  /// where it is, and what it sends for the current epoch is written.
  func startMirrored<Value>(
    supersedes: Bool, guess: (state: State, version: UInt64)?, activity: LoadActivity?, restoresOnCancel: Bool = false,
    priority: TaskPriority?, isolation: isolated (any Actor),
    _ operation: @escaping @MainActor @Sendable (LoadableController<Value>) -> Task<Void, Never>
  ) -> Task<Void, Never> where State == LoadableState<Value> {
    claim(isolation)
    let mirror: StateMirror<Value> = stateMirror(isolation: isolation)
    // What the shadow starts from: the owner's state once the guess is written — or, for a load that restores on
    // cancellation, the state it replaces, so that the shadow writes its own start state and restores that state when
    // its task is cancelled (the owner does not write the start state twice: see `applyMirrored`).
    var restoreSeed: (state: State, version: UInt64)?
    if supersedes || !followsMirror {
      // A load that supersedes a running one showing its start state replaces what that one replaced.
      let inherited = followsRunningMirror && state.isLoading ? mirrorRestores : nil
      if tracker.isRunning { clear()?.cancel() }
      endMirrorJoiners()
      mirrorEpoch &+= 1
      followsMirror = true
      mirrorRestores = restoresOnCancel ? inherited ?? state : nil
      if let replaced = mirrorRestores { restoreSeed = (replaced, inherited == nil ? mirroredVersion : 0) }
      if let guess {
        if !(guess.state.isLoading && state.isLoading),
          !(guess.state.isLoaded && guess.version != 0 && guess.version == mirroredVersion && state.isLoaded)
        {
          mirroredVersion = guess.state.isLoaded ? guess.version : 0
          store(guess.state)
        }
      }
      mirroredActivity = activity ?? LoadActivity()
      publishActivity()
    }
    let seed = restoreSeed ?? (state, mirroredVersion)
    let (epoch, seedState, seedVersion) = (mirrorEpoch, seed.state, seed.version)
    // The load keeps its actor alive until it has ended and the owner has written its last change, as the task of a
    // load run on the owner does (the storage holds the actor `unowned`, the mirror does not hold it).
    let owner: any Actor = isolation
    return Task(priority: priority) {
      defer { withExtendedLifetime(owner) {} }
      let started = await mirror.run(epoch, seed: seedState, seedVersion: seedVersion, operation)
      guard let started else { return }
      await withTaskCancellationHandler {
        await started.value
      } onCancel: {
        started.cancel()
      }
      await mirror.waitUntilDelivered()
    }
  }
}

/// An `async` caller's wait for a mirrored load: cancelling the caller cancels the load (its task).
@usableFromInline
func waitForMirrored(_ task: Task<Void, Never>) async {
  await withTaskCancellationHandler {
    await task.value
  } onCancel: {
    task.cancel()
  }
}

/// Calm presentation, for loads whose options ask for it (``LoadOptions/Resolved/presentsCalmly``): the start state
/// written late or not at all (`loadingDelay`), the result held until the start state was on screen long enough
/// (`minimumLoadingTime`), and the replaced state written back when the load is cancelled (`cancellation`).
///
/// Every other load pays one `nil` check for it. See Documentation/LoadPhases.md, "Calm presentation".
extension StateHost {
  /// Writes the start state of load `id` (the current one), or defers it by the loading delay, and records what the
  /// hold and the restore need. `inherited`: the record of the load it superseded (or its own, carried through a
  /// debounce). `writing`: `false` for a silent load or one still to wait out its debounce, which only inherits a
  /// start state still on screen.
  @usableFromInline
  func presentStart(
    _ plan: LoadPlan<State>, _ options: LoadOptions.Resolved, id: UInt64, writing: Bool,
    inherited: StartOnScreen?, current: State
  ) {
    // The superseded load's start state is still on screen: this load takes over when it appeared and what it
    // replaced, so a spinner already up is neither hidden nor shown again, and its minimum counts from then.
    if let inherited, let shown = inherited.shown as? State, current.isAlready(shown) {
      let record = inherited.inherited(by: options)
      tracker.screen = record
      if writing, !current.isAlready(plan.startState) {
        record.shown = plan.startState
        store(plan.startState)
      }
      return
    }
    guard writing else { return }
    if current.isAlready(plan.startState) {
      // A start state written by something else: nothing to write back, and the minimum counts from now.
      let record = StartOnScreen(options)
      record.shown = plan.startState
      record.shownAt = options.clock.now
      tracker.screen = record
    } else if let delay = options.loadingDelay {
      let wait = Task { [clock = options.clock, origin = options.clock.now, host = hostReference] in
        guard (try? await DeadlineSleep.sleep(for: delay, after: origin, on: clock)) != nil else { return }
        // A result that arrived at the same instant (woken by the same move of a manual clock) is written alone.
        await Task.yield()
        // Still current, its task not cancelled (through its `Task` or its `async` caller: it ends when its block
        // stops), and no `yield` dropped the record meanwhile.
        guard let current = host.object, current.mayWrite(id), current.tracker.task?.isCancelled != true,
          let record = current.tracker.screen, record.shown == nil
        else { return }
        current.show(plan.startState, in: record, clock: clock)
      }
      tracker.screen = StartOnScreen(options, delay: wait)
    } else {
      let record = StartOnScreen(options)
      tracker.screen = record
      show(plan.startState, in: record, clock: options.clock)
    }
  }

  /// Writes `start`, recording what it replaced and when.
  func show(_ start: State, in record: StartOnScreen, clock: any Clock<Duration>) {
    record.replaced = currentState
    record.shown = start
    record.shownAt = clock.now
    store(start)
  }

  /// A `yield` of the current load is about to be written: a pending start state is never written, there is no
  /// minimum to keep, and a cancellation has nothing to write back.
  @usableFromInline
  func dropStartOnScreen() {
    tracker.screen?.end()
    tracker.screen = nil
  }

  /// Writes back the state that `record`'s start state replaced, when the load that kept it was cancelled, it
  /// restores, and the state still is that start state. The caller has ended the load.
  @usableFromInline
  func restore(_ record: StartOnScreen) {
    guard record.restores, let shown = record.shown as? State, let replaced = record.replaced as? State,
      currentState.isAlready(shown)
    else { return }
    store(replaced)
  }

  /// Ends the current load as cancelled: its start state on screen is replaced by what it replaced, when its
  /// options restore. Observers see that write before the activity goes idle.
  @inlinable
  func endCancelled() {
    guard let record = tracker.screen, record.restores else {
      endLoad()
      return
    }
    endLoadBeforeWrite()
    restore(record)
    publishActivity()
  }

  /// Load `id` has its result: when its start state is on screen and its options have a minimum loading time, waits
  /// until the start state has been visible that long (on the options' clock). Holds no host while it waits.
  @usableFromInline
  static func holdResult(of plan: LoadPlan<State>, id: UInt64, host: HostReference<Self>) async {
    // A start state written by a load timed on another clock type cannot be measured on this one: no hold.
    guard let options = plan.options, let minimum = options.minimumLoadingTime, let shownAt = shownAt(id, host),
      DeadlineSleep.isInstant(shownAt, of: options.clock)
    else { return }
    try? await DeadlineSleep.sleep(for: minimum, after: shownAt, on: options.clock)
  }

  /// When the start state of load `id`, if it is current, appeared.
  private static func shownAt(_ id: UInt64, _ host: HostReference<Self>) -> (any InstantProtocol<Duration>)? {
    guard let current = host.object, current.tracker.isCurrent(id) else { return nil }
    return current.tracker.screen?.shownAt
  }
}

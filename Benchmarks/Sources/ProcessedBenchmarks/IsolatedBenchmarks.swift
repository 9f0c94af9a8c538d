// What a load of an actor-owned state costs (`@IsolatedLoadable`, driven through `$value` inside an actor on the
// default executor), against the hand-written actor with a state, a generation counter and a task
// (`HandActorLoader`). Each round hops into the actor once and runs every load of the round there.
import HandWritten
import Processed

/// An actor of the kind `@IsolatedLoadable` is meant for: it owns the state, and its methods drive it.
actor IsolatedOwner {
  @IsolatedLoadable var value: LoadableState<Int> = .absent
  private var token: ObservationToken?

  /// Registers the one observer, on the actor (which pins the state to it).
  func observe(into sink: Sink) {
    token = $value.observe { sink.take($0) }
  }

  /// `loads` load cycles, `async` form: each `await $value.load { i }` returns when the load has ended.
  func asyncCycles(_ loads: Int) async {
    for i in 0..<loads { await $value.load { i } }
  }

  /// `loads` load cycles, Task form: each load's task is awaited before the next starts.
  func taskCycles(_ loads: Int) async {
    for i in 0..<loads {
      let task: Task<Void, Never> = $value.load { i }
      await task.value
    }
  }
}

extension HandActorLoader {
  /// `loads` hand-written load cycles awaited through `load(_:)`, on the actor.
  func asyncCycles(_ loads: Int) async {
    for i in 0..<loads { await load { i } }
  }

  /// `loads` hand-written load cycles, each started with `start(_:)` and its task awaited, on the actor.
  func taskCycles(_ loads: Int) async {
    for i in 0..<loads { await start { i }.value }
  }
}

extension ProcessedBenchmarks {
  /// One load per cycle, each awaited before the next, with one observer that adds the loaded value to a sink (the
  /// same body on both sides), `async` form and Task form.
  @MainActor
  static func isolatedLoadCycles() async {
    let loads = 2_000
    let sink = Sink()
    let hand = HandActorLoader { sink.take($0) }
    let owner = IsolatedOwner()
    await owner.observe(into: sink)
    let results = await measureSideBySide(
      operations: loads,
      [
        { await hand.asyncCycles(loads) },
        { await owner.asyncCycles(loads) },
        { await hand.taskCycles(loads) },
        { await owner.taskCycles(loads) },
      ])
    let (handAsync, oursAsync, handTask, oursTask) = (results[0], results[1], results[2], results[3])
    Bench.record(
      "actor-owned load cycle", "actor-owned load cycle, async form", ours: oursAsync,
      against: "hand-written actor + generation", handAsync, target: "≤ 1.3×", maxRatio: 1.3)
    Bench.record(
      "actor-owned load cycle", "actor-owned load cycle, Task form", ours: oursTask,
      against: "hand-written actor, task awaited", handTask, target: "≤ 1.3×", maxRatio: 1.3)
    withExtendedLifetime(sink) {}
  }

  /// The same cycles with no observer on either side, against the bare hand-written actor (`HandBareActorLoader`: no
  /// observer, no cancellation handler), called from the main actor as a user's code calls them: what the issue's
  /// independent measurement compared.
  @MainActor
  static func isolatedBareCycles() async {
    let loads = 2_000
    let bare = HandBareActorLoader()
    let owner = IsolatedOwner()
    let results = await measureSideBySide(
      operations: loads,
      [
        { await bare.cycles(loads) },
        { await owner.asyncCycles(loads) },
        { await owner.taskCycles(loads) },
      ])
    let (hand, oursAsync, oursTask) = (results[0], results[1], results[2])
    Bench.record(
      "actor-owned load cycle", "actor-owned load cycle, async form, no observer", ours: oursAsync,
      against: "bare hand-written actor + generation", hand, target: "≤ 1.3×", maxRatio: 1.3)
    Bench.record(
      "actor-owned load cycle", "actor-owned load cycle, Task form, no observer", ours: oursTask,
      against: "bare hand-written actor + generation", hand, target: "≤ 1.3×", maxRatio: 1.3)
  }
}

import Testing

@testable import Processed

/// Suspends until `condition` holds. The condition is checked now, and again each time one of `wakes` reports a
/// change of something it reads — never on a timer, never by yielding in a loop. Records an issue and returns if it
/// does not hold within the ``SafetyLimit`` (so that a bug fails the test instead of hanging it — never a "long
/// enough" wait).
///
/// ```swift
/// model.refresh()
/// await until(.changes(of: model.$numbers)) { model.numbers.isLoaded }
/// ```
///
/// The condition is checked on the main actor after the wake, once the code that made the change has suspended or
/// returned: so it also sees what that code did right after the notification, in the same turn of the main actor (a
/// load that writes its start state, then records its activity).
@MainActor
func until(
  _ wakes: Wake..., timeLimit: Duration = SafetyLimit.standard, sourceLocation: SourceLocation = #_sourceLocation,
  _ condition: () -> Bool
) async {
  if await holds(wokenBy: wakes, within: timeLimit, condition) { return }
  Issue.record("condition not met in time", sourceLocation: sourceLocation)
}

/// The wait of ``until(_:timeLimit:sourceLocation:_:)`` without its issue, for a caller that reports a timeout its own
/// way: returns whether `condition` held before `timeLimit` passed.
@MainActor
func holds(wokenBy wakes: [Wake], within timeLimit: Duration, _ condition: () -> Bool) async -> Bool {
  if condition() { return true }
  let waiter = UntilWaiter()
  let stops = wakes.map { $0.start(waiter.wake) }
  let deadline = SafetyLimit.start(timeLimit) { waiter.expire() }
  defer {
    deadline.cancel()
    for stop in stops { stop() }
  }
  while !condition() {
    guard await waiter.next() else { return false }
  }
  return true
}

/// What wakes an ``until(_:timeLimit:sourceLocation:_:)``: a report of each change of something its condition reads.
@MainActor
struct Wake {
  /// Starts calling `wake` after each change (from any thread); returns what stops it.
  let start: (_ wake: @escaping @Sendable () -> Void) -> () -> Void
}

extension Wake {
  /// Each change of a `@Loadable` state or of a key-path state (`$x`, `model.loadables.x`).
  static func changes<Value>(of controller: LoadableController<Value>) -> Wake {
    .token { wake in controller.observe { _ in wake() } }
  }

  /// Each change of a `@Process` state or of a key-path process state (`$x`, `model.processes.x`).
  static func changes<Kind>(of controller: ProcessController<Kind>) -> Wake {
    .token { wake in controller.observe { _ in wake() } }
  }

  /// Each change of a model's property, as `model.observe(keyPath)` delivers it.
  static func changes<Model: ObservableModel, Value>(of model: Model, _ keyPath: KeyPath<Model, Value>) -> Wake {
    .token { wake in model.observe(keyPath) { _ in wake() } }
  }

  /// Each change of a load's activity (its phase, progress, last error).
  static func activity<Value>(of controller: LoadableController<Value>) -> Wake {
    .token { wake in controller.observeActivity { _ in wake() } }
  }

  /// Each change of a process's activity.
  static func activity<Kind>(of controller: ProcessController<Kind>) -> Wake {
    .token { wake in controller.observeActivity { _ in wake() } }
  }

  /// Each call of the handler an observation made by `observe` (given the handler to register) calls; the wait
  /// cancels the observation's token when it ends.
  static func token(_ observe: @escaping (_ wake: @escaping @Sendable () -> Void) -> ObservationToken) -> Wake {
    Wake { wake in
      let token = observe(wake)
      return { token.cancel() }
    }
  }

  /// Each task that arrives at `gate`, and its opening.
  static func arrivals(at gate: Gate) -> Wake { .signal(gate.changes) }

  /// Each change of `box.value`.
  static func changes<Value>(of box: KeyPathBox<Value>) -> Wake { .signal(box.changes) }

  /// Each change of a limiter's ``LoadLimiter/running`` or ``LoadLimiter/waiting``. One wait at a time per limiter:
  /// it sets the limiter's single ``LoadLimiter/onQueueChange``.
  static func queue(of limiter: LoadLimiter) -> Wake {
    Wake { wake in
      if limiter.onQueueChange != nil { Issue.record("two waits on the queue of one limiter") }
      limiter.onQueueChange = wake
      return { limiter.onQueueChange = nil }
    }
  }

  /// Each `fire()` of `signal`.
  static func signal(_ signal: Signal) -> Wake {
    Wake { wake in
      let id = signal.listen(wake)
      return { signal.stopListening(id) }
    }
  }
}

/// Something that happened, for waits to be woken by: `fire()` counts it and wakes every wait listening. It stands
/// for events the library has no observer for (a block started, a line was printed, a model was freed). May be fired
/// from any thread, also from a `deinit`.
final class Signal: Sendable {
  private let state = LockedBox<(count: Int, nextID: UInt64, listeners: [UInt64: @Sendable () -> Void])>(
    (0, 0, [:]))

  init() {}

  /// How many times it was fired.
  var count: Int { state.withLock { $0.count } }

  /// Counts the event and calls every listener (outside the lock).
  func fire() {
    let listeners = state.withLock { state in
      state.count += 1
      return Array(state.listeners.values)
    }
    for listener in listeners { listener() }
  }

  /// Calls `listener` on every later `fire()`, until `stopListening` with the returned id.
  func listen(_ listener: @escaping @Sendable () -> Void) -> UInt64 {
    state.withLock { state in
      state.nextID += 1
      state.listeners[state.nextID] = listener
      return state.nextID
    }
  }

  func stopListening(_ id: UInt64) {
    _ = state.withLock { $0.listeners.removeValue(forKey: id) }
  }
}

/// The suspension of one ``until(_:timeLimit:sourceLocation:_:)``: woken by a change (from any thread) or by its
/// deadline. A wake that comes while the wait is not suspended is kept, so none is lost between checks.
private final class UntilWaiter: Sendable {
  private let state = LockedBox<(woken: Bool, expired: Bool, continuation: CheckedContinuation<Bool, Never>?)>(
    (false, false, nil))

  /// A change happened: the wait checks its condition again.
  @Sendable func wake() {
    let continuation = state.withLock { state in
      defer { state.continuation = nil }
      if state.continuation == nil { state.woken = true }
      return state.continuation
    }
    continuation?.resume(returning: true)
  }

  /// The safety limit passed: the wait gives up.
  func expire() {
    let continuation = state.withLock { state in
      defer { state.continuation = nil }
      state.expired = true
      return state.continuation
    }
    continuation?.resume(returning: false)
  }

  /// Suspends until the next wake (`true`) or the deadline (`false`); returns at once for a wake that came meanwhile.
  func next() async -> Bool {
    await withCheckedContinuation { continuation in
      let answer: Bool? = state.withLock { state in
        if state.expired { return false }
        if state.woken {
          state.woken = false
          return true
        }
        state.continuation = continuation
        return nil
      }
      if let answer { continuation.resume(returning: answer) }
    }
  }
}

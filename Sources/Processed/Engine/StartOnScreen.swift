/// What a load with calm-presentation options knows about its start state on screen (see
/// ``LoadOptions/loadingDelay``, ``LoadOptions/minimumLoadingTime``, ``LoadOptions/cancellation``): kept in the
/// ``LoadTracker`` of the current load, made only for loads with those options.
///
/// The states are those of the host that keeps the record (type-erased, because the tracker is not generic). A load that
/// supersedes one whose start state is still on screen takes over its record's `replaced` and `shownAt`. A `yield`
/// drops the record: something else is on screen now.
@MainActor @usableFromInline
final class StartOnScreen {
  /// Whether a cancellation writes ``replaced`` back (``CancellationBehavior/restorePreviousState``).
  @usableFromInline let restores: Bool
  /// The state the start state replaced; `nil`: nothing to write back.
  var replaced: (any Sendable)?
  /// The start state on screen, written by this load or one it superseded; `nil` while none is.
  var shown: (any Sendable)?
  /// When ``shown`` was written, on the clock of the load that wrote it.
  @usableFromInline var shownAt: (any InstantProtocol<Duration>)?
  /// The wait of a loading delay, which writes the start state when it ends; cancelled when the load ends.
  nonisolated let delay: Task<Void, Never>?

  /// How long the start state stays on screen at least, and the clock that is measured on (the load's options').
  @usableFromInline let minimum: Duration?
  @usableFromInline let clock: any Clock<Duration>

  init(_ options: LoadOptions.Resolved, delay: Task<Void, Never>? = nil) {
    restores = options.restoresOnCancel
    minimum = options.minimumLoadingTime
    clock = options.clock
    self.delay = delay
  }

  /// Whether a result written now would end the start state sooner than the minimum after it appeared.
  @usableFromInline
  var holdsResult: Bool {
    guard let minimum, let shownAt else { return false }
    return DeadlineSleep.isBefore(minimum, after: shownAt, on: clock)
  }

  /// A record for a load that supersedes this record's load while its start state is still on screen.
  func inherited(by options: LoadOptions.Resolved) -> StartOnScreen {
    let record = StartOnScreen(options)
    record.replaced = replaced
    record.shown = shown
    record.shownAt = shownAt
    return record
  }

  /// The load has ended, or something else was written: a pending start state is never written. Called from any
  /// thread (a wrapper's storage may be released anywhere).
  @usableFromInline
  nonisolated func end() {
    delay?.cancel()
  }
}

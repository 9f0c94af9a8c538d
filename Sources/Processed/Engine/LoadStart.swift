/// How a load call starts: decided once, for every owner, from the call's options, the state's current load and its
/// last debounced call. A main-actor state (`StateHost.startShaped`) and an actor-owned one
/// (`IsolatedStateStorage.start`) act on it; see Documentation/LoadPhases.md.
@usableFromInline
enum LoadStart: Equatable {
  /// `.joinRunning` while a load that can still write runs: the call starts nothing and ends with that load.
  case join
  /// The load starts now.
  case now
  /// A debounce applies: the load supersedes the current one at once and writes nothing until `delay` is over.
  case debounced(Duration)

  /// Decides how a call with `options` starts, and records it in `lastLoadCall` when the state times its calls for a
  /// `.leading` debounce (see ``LoadCallMark/note(_:on:)``).
  ///
  /// `joinable`: whether the state's current load may be joined (``LoadTracker/isJoinable``); read only for a
  /// `.joinRunning` call. A zero or negative debounce, or a previous call timed on another clock type, never waits.
  @inlinable
  static func decide(
    _ options: LoadOptions, joinable: @autoclosure () -> Bool, lastLoadCall: inout LoadCallMark?
  ) -> LoadStart {
    if options.overlap == .joinRunning, joinable() { return .join }
    guard let debounce = options.debounce else {
      LoadCallMark.note(&lastLoadCall, on: options.clock)
      return .now
    }
    let previous = lastLoadCall
    lastLoadCall = LoadCallMark(options.clock)
    guard let delay = debounce.delay(after: previous, on: options.clock) else { return .now }
    return .debounced(delay)
  }
}

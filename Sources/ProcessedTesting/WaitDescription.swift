import Processed

/// The words of the waits' failure messages: durations, instants of a ``TestClock``, recorded values and phases.
enum WaitDescription {
  /// "30s", "0.02s", "-1s".
  static func duration(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    if attoseconds == 0 { return "\(seconds)s" }
    return "\(Double(seconds) + Double(attoseconds) / 1e18)s"
  }

  /// "+5s": an instant as its offset from the clock's start.
  static func instant(_ instant: TestClock.Instant) -> String {
    "+" + duration(instant.offset)
  }

  /// "1 change: [LoadableState.loading]", "no changes": values as the recorder holds them.
  static func values<Value>(_ values: [Value], as noun: String) -> String {
    list(values.map { String(reflecting: $0) }, as: noun)
  }

  /// "2 phases: [.running(attempt: 1), .idle]".
  static func phases(_ phases: [LoadActivity.Phase]) -> String {
    list(phases.map(phase), as: "phase")
  }

  /// ".retrying(attempt: 2)": a phase as a test writes it.
  static func phase(_ phase: LoadActivity.Phase) -> String {
    switch phase {
    case .idle: ".idle"
    case .debouncing: ".debouncing"
    case .waiting: ".waiting"
    case .running(let attempt): ".running(attempt: \(attempt))"
    case .retrying(let attempt): ".retrying(attempt: \(attempt))"
    case .paused: ".paused"
    }
  }

  private static func list(_ items: [String], as noun: String) -> String {
    if items.isEmpty { return "no \(noun)s" }
    return "\(items.count) \(noun)\(items.count == 1 ? "" : "s"): [\(items.joined(separator: ", "))]"
  }
}

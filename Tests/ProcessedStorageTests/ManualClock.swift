import Foundation

/// A date that a test sets and advances, read by a storage through its `now` closure.
final class ManualClock: @unchecked Sendable {
  private let lock = NSLock()
  // Guarded by `lock`.
  private var date: Date

  init(_ date: Date = Date(timeIntervalSince1970: 1_700_000_000)) { self.date = date }

  /// The current date.
  func now() -> Date { lock.withLock { date } }

  /// Moves the date forward by `seconds`.
  func advance(by seconds: TimeInterval) { lock.withLock { date += seconds } }
}

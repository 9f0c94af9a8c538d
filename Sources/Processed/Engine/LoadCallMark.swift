/// When a debounced load call was made, on its options' clock: what a `.leading` debounce compares with.
@usableFromInline
final class LoadCallMark: Sendable {
  @usableFromInline let instant: any InstantProtocol<Duration>

  @usableFromInline
  init(_ clock: any Clock<Duration>) {
    instant = clock.now
  }

  /// Records a load call that is not debounced: once a state has had a debounced call, every later call is timed
  /// too, on its options' clock; the calls before it are not, so that a state that never debounces pays nothing for it.
  @inlinable
  static func note(_ mark: inout LoadCallMark?, on clock: @autoclosure () -> any Clock<Duration>) {
    if mark != nil { mark = LoadCallMark(clock()) }
  }

  /// The time since the mark on `clock`, or `nil` when the mark was made on a clock of another type.
  func elapsed(on clock: any Clock<Duration>) -> Duration? {
    Self.elapsed(clock, since: instant)
  }

  private static func elapsed<C: Clock<Duration>>(_ clock: C, since mark: any InstantProtocol<Duration>) -> Duration? {
    guard let mark = mark as? C.Instant else { return nil }
    return mark.duration(to: clock.now)
  }
}

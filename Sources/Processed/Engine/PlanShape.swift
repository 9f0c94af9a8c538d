/// The part of a load's plan that only loads with options, interrupts or a debounce have, kept out of line so that a
/// plain plan, copied a few times per load, is a few words (measured: a tenth of a back-to-back load). Shared by
/// ``LoadPlan`` and ``IsolatedPlan``; `Interrupt` is the type of the plan's `onInterrupt` (a main-actor closure, or
/// one called on the owning actor).
///
/// Copied on write (``ShapedPlan/reshape(_:)``).
@usableFromInline
final class PlanShape<Interrupt> {
  @usableFromInline var interrupts: [Duration] = []
  @usableFromInline var onInterrupt: Interrupt?
  @usableFromInline var options: LoadOptions.Resolved?
  @usableFromInline var debounce: Duration?
  @usableFromInline var debounceOrigin: LoadCallMark?
  @usableFromInline var ticket: PermitTicket?
  @usableFromInline var network: (any NetworkGate)?

  @inlinable
  init() {}

  /// A shape with the same fields.
  @inlinable
  func copy() -> PlanShape {
    let copy = PlanShape()
    copy.interrupts = interrupts
    copy.onInterrupt = onInterrupt
    copy.options = options
    copy.debounce = debounce
    copy.debounceOrigin = debounceOrigin
    copy.ticket = ticket
    copy.network = network
    return copy
  }
}

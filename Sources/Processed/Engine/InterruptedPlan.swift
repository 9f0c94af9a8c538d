/// The plan of a load with interrupts, as its interrupts' task reaches it: emptied when the load ends. Touched only on
/// the load's owner (the task is isolated to it).
@usableFromInline
final class InterruptedPlan<Plan> {
  @usableFromInline var plan: Plan?

  @inlinable
  init(_ plan: Plan) { self.plan = plan }
}

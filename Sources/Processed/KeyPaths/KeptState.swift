/// A key-path state's last state that held a value (see ``ObserverSlotMainFields/keptState``).
@usableFromInline
final class KeptState<State> {
  @usableFromInline var state: State

  @usableFromInline
  init(_ state: State) {
    self.state = state
  }
}

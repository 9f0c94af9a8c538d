extension ChangeRecipients: ChangeRecipient {}

/// Everyone one change goes to when it reaches two slots (a wrapper's own observers and its model's), or when
/// a key-path write delivers a snapshot it took before writing. Kept inline, so that a write allocates nothing.
@usableFromInline
struct ChangeRecipients<Value> {
  @usableFromInline var first: ObserverSnapshot<Value>
  @usableFromInline var second: ObserverSnapshot<Value>

  @inlinable
  init(first: ObserverSnapshot<Value> = .none, second: ObserverSnapshot<Value> = .none) {
    self.first = first
    self.second = second
  }

  @inlinable
  var isEmpty: Bool { first.isEmpty && second.isEmpty }

  @inlinable @MainActor
  func deliver(_ value: Value) {
    first.deliver(value)
    second.deliver(value)
  }
}

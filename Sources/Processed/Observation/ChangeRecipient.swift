/// Observers taken before a change is made, to deliver it to after: one slot's (``ObserverSnapshot``) or two slots'
/// (``ChangeRecipients``).
@usableFromInline
protocol ChangeRecipient<Value> {
  associatedtype Value
  /// Whether there is nobody to call.
  var isEmpty: Bool { get }
  /// Calls every observer with `value` (see ``ObserverSnapshot/deliver(_:)``).
  @MainActor func deliver(_ value: Value)
}

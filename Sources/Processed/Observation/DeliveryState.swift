/// Whether a state's changes are being delivered, and the deliveries of changes made meanwhile.
@usableFromInline
struct DeliveryState {
  @usableFromInline var pending: [@MainActor () -> Void] = []
  @usableFromInline var isDelivering = false

  init() {}
}

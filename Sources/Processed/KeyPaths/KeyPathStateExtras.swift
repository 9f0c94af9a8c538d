/// What the library keeps about a key-path state beyond its running load, whose host lives only while the load
/// runs: the last call (for `.leading` debounces), the activity record (its observers, the error kept beside the
/// state) and, for a class that is not an ``ObservableModel``, the slot its controllers observe. Held in a main-actor
/// table by instance and key path, with a weak reference to the instance, so that an instance whose identity is
/// reused does not inherit its predecessor's and the table never keeps a model alive; entries of instances that are
/// gone are swept when the table has doubled since the last sweep. While the table is empty, a host's lookup is one
/// `isEmpty` check.
@usableFromInline @MainActor
final class KeyPathStateExtras {
  @usableFromInline weak var model: AnyObject?
  @usableFromInline var lastLoadCall: LoadCallMark?
  @usableFromInline var activityRecord: ActivityRecord?
  /// For a class that is not an ``ObservableModel``: the slot its key-path controllers observe, which the
  /// library's writes notify. Closed when the extras go away (after their model did, at a sweep).
  var ownSlot: ObserverSlot?
  @usableFromInline var ownLink: SlotLink?

  init(model: AnyObject) {
    self.model = model
  }

  /// The slot kept beside the state, made on first use.
  func ownLink<State>(of type: State.Type) -> SlotLink {
    if let ownLink { return ownLink }
    let slot = ObserverSlot.make()
    let link = SlotLink(slot)
    ownSlot = slot
    ownLink = link
    return link
  }

  isolated deinit {
    ownSlot?.close()
  }

  @usableFromInline static var table: [KeyPathHostKey: KeyPathStateExtras] = [:]
  private static var sweepAt = 64

  /// The extras of the state at `key` of `model`, if any were made.
  @inlinable
  static func existing(for model: AnyObject, _ key: KeyPathHostKey) -> KeyPathStateExtras? {
    if table.isEmpty { return nil }
    guard let extras = table[key], extras.model === model else { return nil }
    return extras
  }

  /// The extras of the state at `key` of `model`, made if there are none.
  @usableFromInline
  static func make(for model: AnyObject, _ key: KeyPathHostKey) -> KeyPathStateExtras {
    if let extras = existing(for: model, key) { return extras }
    let extras = KeyPathStateExtras(model: model)
    table[key] = extras
    if table.count >= sweepAt {
      table = table.filter { $0.value.model != nil }
      sweepAt = max(64, table.count * 2)
    }
    return extras
  }
}

/// What the library keeps about a key-path state beyond its running load: the last call, the activity record and, for a
/// class that is not an ``ObservableModel``, its slot.
///
/// Held by instance (weakly) and key path, swept when the table doubles. See Documentation/KeyPathWrites.md.
@usableFromInline @MainActor
final class KeyPathStateExtras {
  weak var model: AnyObject?
  var lastLoadCall: LoadCallMark?
  var activityRecord: ActivityRecord?
  /// For a class that is not an ``ObservableModel``: the slot its key-path controllers observe, which the
  /// library's writes notify. Closed when the extras go away (after their model did, at a sweep).
  var ownSlot: ObserverSlot?
  var ownLink: SlotLink?

  init(model: AnyObject) {
    self.model = model
  }

  /// The slot kept beside the state, made on first use. A class that is not an ``ObservableModel`` tells no one when it
  /// goes away, so while such slots are open the sweeper looks for their models every second and closes the slots of
  /// those that went (their `states` sequences end, their observers are dropped).
  func ownLink<State>(of type: State.Type) -> SlotLink {
    if let ownLink { return ownLink }
    let slot = ObserverSlot.make()
    let link = SlotLink(slot)
    ownSlot = slot
    ownLink = link
    Self.startSweeping()
    return link
  }

  /// The task that closes the slots of models that went away; `nil` while no slot is open.
  private static var sweeper: Task<Void, Never>?

  private static func startSweeping() {
    guard sweeper == nil else { return }
    sweeper = Task { @MainActor in
      while true {
        try? await Task.sleep(for: .seconds(1))
        guard closeSlotsOfModelsThatWent() else { break }
      }
      sweeper = nil
    }
  }

  /// Closes the slots whose model went away and forgets their extras; returns whether a slot is still open.
  static func closeSlotsOfModelsThatWent() -> Bool {
    var open = false
    for (key, extras) in table {
      if extras.model == nil {
        extras.ownSlot?.close()
        extras.ownSlot = nil
        extras.ownLink = nil
        table[key] = nil
      } else if extras.ownSlot != nil {
        open = true
      }
    }
    return open
  }

  isolated deinit {
    ownSlot?.close()
  }

  static var table: [KeyPathHostKey: KeyPathStateExtras] = [:]
  private static var sweepAt = 64

  /// The extras of the state at `key` of `model`, if any were made.
  static func existing(for model: AnyObject, _ key: KeyPathHostKey) -> KeyPathStateExtras? {
    if table.isEmpty { return nil }
    guard let extras = table[key], extras.model === model else { return nil }
    return extras
  }

  /// The extras of the state at `key` of `model`, made if there are none.
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

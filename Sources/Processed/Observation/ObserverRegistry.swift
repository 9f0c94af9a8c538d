/// The macro-free, thread-safe registry that delivers state changes to observers.
///
/// A registry holds observers keyed by property. Each observed property gets a *slot* the first time an observer
/// registers for it (or a writer connects to it); from then on a write notifies through the slot directly, without
/// hashing a key path.
///
/// Guarantees:
/// - Observers are called synchronously after the change, on the main actor, outside any lock, in registration
///   order, once per change.
/// - An observer registered while a notification is being delivered does not see that change.
/// - After ``ObservationToken/cancel()`` returns, the observer is never called again — also when `cancel()` runs on
///   another thread. A call that had already begun on the main actor may finish.
/// - Handlers may register or cancel observers (their own too), write other observed properties and start, cancel
///   or reset loads without deadlock.
///
/// You rarely touch a registry directly: an ``ObservableModel`` owns one and ``ObservableModel/observe(_:isolation:_:)``
/// registers with it.
///
/// ```swift
/// @MainActor
/// final class Profile: ObservableModel, LoadableSupport {
///   let observers = ObserverRegistry()
///   var avatar: LoadableState<[UInt8]> = .absent
/// }
/// ```
///
/// > Note: A registry never takes part in its owner's equality, hashing or coding, and never retains its owner.
public final class ObserverRegistry: Sendable {
  /// Where the observers live; shared with tokens, links and snapshots.
  @usableFromInline let core = RegistryCore()

  /// Creates an empty registry.
  public init() {}

  deinit {
    core.close()
  }

  // Internal conveniences (tests and the model extension reach the core through the registry).

  @usableFromInline
  func slot<Value>(for key: AnyKeyPath, of type: Value.Type = Value.self) -> ObserverSlot {
    core.slot(for: key, of: type)
  }

  func makeAnonymousSlot<Value>(of type: Value.Type = Value.self) -> ObserverSlot {
    core.makeAnonymousSlot(of: type)
  }

  @inlinable
  func addObserver<Value>(
    to slot: ObserverSlot,
    onRegistryEnd: (@Sendable () -> Void)? = nil,
    _ handler: @escaping @MainActor (Value) -> Void
  ) -> ObservationToken {
    core.addObserver(to: slot, onRegistryEnd: onRegistryEnd, handler)
  }

  @inlinable @MainActor
  func notify<Value>(_ slot: ObserverSlot, _ value: Value) {
    core.notify(slot, value)
  }

  @inlinable @MainActor
  func keyPathWrite<Value>(in slot: ObserverSlot, value: Value, readBack: () -> Value, write: () -> Void) {
    core.keyPathWrite(in: slot, value: value, readBack: readBack, write: write)
  }

  /// The number of observers registered across all slots (for tests and diagnostics).
  var observerCount: Int { core.observerCount }
}

/// Everything a registry does: the observers by slot, the lock, the atomics behind "no call after `cancel()`
/// returns", and key-path coalescing.
///
/// Tokens, links and snapshots hold the core strongly and the public ``ObserverRegistry`` owns it; when the registry
/// goes away it *closes* the core, which drops every observer (releasing their handlers) and refuses new ones. No
/// weak reference points at a core: a weakly referenced object keeps its reference count in a side table, where
/// every retain and release takes a slow path — and the core is retained on every notification.
@usableFromInline
final class RegistryCore: @unchecked Sendable {
  struct State {
    var isClosed = false
    var nextID: UInt64 = 0
    var slots: [ObserverSlot] = []
    var slotIndexByKey: [AnyKeyPath: Int] = [:]
    /// The key path object resolved last and its slot index: resolving the same key path object again (the same
    /// `\.property` literal, observed or written over and over) skips hashing it. Holding the key path keeps its
    /// identity from being reused.
    var lastKey: (keyPath: AnyKeyPath, index: Int)?
    /// Where a cancelling thread blocks while a call of its observer may still start; made by the first one.
    var waitPoint: WaitPoint?
  }

  /// A key-path write in progress (see `keyPathWrite`).
  @usableFromInline
  struct KeyPathWrite {
    @usableFromInline let slot: ObjectIdentifier
    /// Whether the property's own notification of this write (its echo) was absorbed.
    @usableFromInline var echoed = false
    /// The value the property held after this write: the echo's value, or the value read when a nested write of
    /// the same property began. `nil`: read it back when the write returns.
    @usableFromInline var settled: Any?

    @usableFromInline
    init(slot: ObjectIdentifier) {
      self.slot = slot
    }
  }

  let state = LockedBox(State())
  /// Bumped (under the lock) by every cancellation, so a notification in flight learns cheaply whether it must
  /// re-check an observer it copied before calling it.
  private let cancellations = AtomicUInt64()
  /// The slot being notified right now (its address; `0`: none), the thread notifying it, and how many notifications
  /// have ended. A cancellation on another thread that finds its slot being notified waits until a notification
  /// ends, so that no call starts after `cancel()` returns.
  private let activeSlot = AtomicUInt64()
  private let notifyingThread = AtomicUInt64()
  private let notificationsEnded = AtomicUInt64()
  /// How many cancelling threads are blocked in `waitPoint`.
  private let waiters = AtomicUInt64()
  /// The key-path writes in progress, innermost last (see `keyPathWrite`).
  /// Main-actor only and touched in short accesses, so the dynamic exclusivity check is skipped.
  @usableFromInline @MainActor @exclusivity(unchecked) var keyPathWrites: [KeyPathWrite] = []

  @usableFromInline
  init() {}

  /// Drops every observer, runs their end-of-registry hooks and refuses observers registered from now on.
  func close() {
    let removed = state.withLock { state in
      state.isClosed = true
      // Counts as a cancellation of every observer: a notification in flight re-checks before each call, so an
      // observer whose token is cancelled after the registry closed is not called for that change either.
      cancellations.increment()
      return state.slots.flatMap { $0.removeAll() }
    }
    // Outside the lock: the hooks are user code, and releasing the entries may release tokens.
    for entry in removed { entry.call.onRegistryEnd?() }
  }

  // MARK: Slots

  /// The slot for `key`, created on first use. Hashes `key` once; callers cache the result.
  @usableFromInline
  func slot<Value>(for key: AnyKeyPath, of type: Value.Type = Value.self) -> ObserverSlot {
    state.withLock { state in
      let index: Int
      if let last = state.lastKey, last.keyPath === key {
        index = last.index
      } else if let found = state.slotIndexByKey[key] {
        index = found
        state.lastKey = (key, found)
      } else {
        let slot = ObserverSlot(valueType: Value.self)
        state.slotIndexByKey[key] = state.slots.count
        state.lastKey = (key, state.slots.count)
        state.slots.append(slot)
        return slot
      }
      let slot = state.slots[index]
      precondition(
        slot.valueType == Value.self, "Processed: key path \(key) was observed with two different value types.")
      return slot
    }
  }

  /// A slot that belongs to no key path (the single slot of a wrapper's own registry).
  @usableFromInline
  func makeAnonymousSlot<Value>(of type: Value.Type = Value.self) -> ObserverSlot {
    state.withLock { state in
      let slot = ObserverSlot(valueType: Value.self)
      state.slots.append(slot)
      return slot
    }
  }

  // MARK: Registering

  /// Registers `handler` in `slot` and returns the token that keeps it registered.
  @inlinable
  func addObserver<Value>(
    to slot: ObserverSlot,
    onRegistryEnd: (@Sendable () -> Void)? = nil,
    _ handler: @escaping @MainActor (Value) -> Void
  ) -> ObservationToken {
    assert(
      slot.valueType == Value.self, "Processed: an observer of \(Value.self) registered in a slot of \(slot.valueType)")
    return addObserver(TypedObserverCall(handler, onRegistryEnd: onRegistryEnd), to: slot)
  }

  @usableFromInline
  func addObserver(_ call: ObserverCall, to slot: ObserverSlot) -> ObservationToken {
    let id: UInt64 = state.withLock { state in
      state.nextID &+= 1
      // A closed core (its registry is gone, or going) takes no observer; the token is inert.
      guard !state.isClosed else { return state.nextID }
      slot.entries.append(.init(id: state.nextID, call: call))
      return state.nextID
    }
    return ObservationToken(core: self, slot: slot, id: id)
  }

  /// Removes an observer. Safe from any thread, any number of times. When the observer is being called on another
  /// thread, waits until that call returns; a handler cancelling itself (or another observer) does not wait.
  func removeObserver(id: UInt64, from slot: ObserverSlot) {
    let entry = state.withLock { _ in
      let entry = slot.remove(id: id)
      if entry != nil { cancellations.increment() }
      return entry
    }
    // Also when the entry was already gone: another thread's `cancel()` of the same token, or the registry's
    // `close()`, may have removed it an instant ago, while a notification had already chosen to call it. Either
    // removal bumped `cancellations` under the lock, which this thread took after it.
    waitForCallsToEnd(in: slot)
    // `entry` is released here, after the lock: its handler may hold the last reference to a token.
    withExtendedLifetime(entry) {}
  }

  /// Blocks until no call of an observer of `slot` can start from the notification under way on another thread.
  ///
  /// Pairs with `call`, which publishes `activeSlot` before it reads `cancellations` for each observer, while the
  /// canceller reads `activeSlot` after its removal bumped `cancellations` (all sequentially consistent, so the
  /// argument holds on weakly ordered hardware and on x86 alike). So either the notifier sees the cancellation and
  /// skips the observer, or the canceller sees the notification and waits until one ends — by then any call it
  /// might have made has started and is "under way". A handler cancelling on the notifying thread never waits.
  ///
  /// The wait blocks on a condition variable, which `call` signals after ending a notification when it sees a
  /// waiter. The notifier reads the waiter count without a fence (a fence would cost every notification), so it
  /// can miss a waiter that arrives at that instant; the waiter then re-checks its condition after at most one
  /// `WaitPoint` interval (a millisecond) instead of sleeping until the next signal. It never spins.
  private func waitForCallsToEnd(in slot: ObserverSlot) {
    let slotBits = Self.bits(of: .passUnretained(slot))
    guard activeSlot.load() == slotBits, notifyingThread.load() != currentThreadID() else { return }
    let seen = notificationsEnded.load()
    let waitPoint = state.withLock { state in
      if let made = state.waitPoint { return made }
      let made = WaitPoint()
      state.waitPoint = made
      return made
    }
    waiters.increment()
    waitPoint.wait { activeSlot.load() == slotBits && notificationsEnded.load() == seen }
    waiters.decrement()
  }

  private static func bits(of slot: Unmanaged<ObserverSlot>) -> UInt64 {
    UInt64(UInt(bitPattern: slot.toOpaque()))
  }

  private func isRegistered(_ id: UInt64, in slot: ObserverSlot) -> Bool {
    state.withLock { _ in slot.contains(id: id) }
  }

  /// The number of observers registered across all slots (for tests and diagnostics).
  var observerCount: Int {
    state.withLock { state in state.slots.reduce(0) { $0 + $1.entries.count } }
  }

  // MARK: Notifying

  /// The observers of `slot` right now, or `nil` when there are none.
  @usableFromInline @MainActor
  func snapshot(of slot: ObserverSlot) -> ObserverSnapshot? {
    let (entries, epoch) = state.withLock { _ in
      (slot.entries, cancellations.load())
    }
    if entries.isEmpty { return nil }
    return ObserverSnapshot(core: self, slot: slot, entries: entries, epoch: epoch)
  }

  /// Calls every observer registered in `slot` with `value`, on the main actor, outside the lock, after any change
  /// of the slot whose delivery is in progress.
  @inlinable @MainActor
  func notify<Value>(_ slot: ObserverSlot, _ value: Value) {
    assert(slot.valueType == Value.self, "Processed: a \(Value.self) notified to a slot of \(slot.valueType)")
    SlotLink(core: self, slot: slot).notify(value)
  }

  /// Calls the observers of a snapshot with the value at `value`, skipping those cancelled since it was taken.
  @usableFromInline @MainActor
  func call(
    _ entries: ContiguousArray<ObserverSlot.Entry>, of slot: Unmanaged<ObserverSlot>, with value: UnsafeRawPointer,
    epoch: UInt64
  ) {
    let thread = currentThreadID()
    if notifyingThread.load() != thread { notifyingThread.store(thread) }
    let previous = activeSlot.exchange(Self.bits(of: slot))
    var mustRecheck = false
    entries.withElements { entries in
      for index in entries.indices {
        if !mustRecheck, cancellations.load() != epoch {
          // Something was cancelled since the snapshot: from here on, ask the registry before each call.
          mustRecheck = true
        }
        if mustRecheck, !slot.withGuaranteedInstance({ isRegistered(entries[index].id, in: $0) }) { continue }
        // Unretained: the snapshot's entries keep the call alive.
        Unmanaged.passUnretained(entries[index].call).withGuaranteedInstance { $0(value) }
      }
    }
    // Only the notifying thread writes `notificationsEnded`. When this notification was nested in another slot's,
    // `activeSlot` is handed back with a sequentially consistent exchange, not a release store: the outer loop then
    // resumes reading `cancellations`, and a release store could be ordered after those reads (x86 lets a store
    // pass a later load), so a canceller could miss both. At the outermost level no read follows, and a release
    // store is enough: a canceller only waits for the value to change.
    notificationsEnded.storeRelease(notificationsEnded.load() &+ 1)
    if previous == 0 {
      activeSlot.storeRelease(0)
    } else {
      _ = activeSlot.exchange(previous)
    }
    // A waiter that increments `waiters` just after this read is not woken here; it sleeps at most one
    // `WaitPoint` interval before it sees the change itself (see `waitForCallsToEnd`).
    if waiters.load() != 0 { wakeWaiters() }
  }

  private func wakeWaiters() {
    state.withLock { $0.waitPoint }?.wakeAll()
  }

  /// Runs a key-path write of the property whose observers are `slot`, and delivers it once: the value the property
  /// holds after the write.
  ///
  /// The property may notify by itself (an ``Observed`` property, or a `didSet` that calls
  /// ``ObservableModel/notifyObservers(_:)``), and each change must reach each observer exactly once. The first
  /// notification of `slot` made while this write is the innermost one — its *echo* — is absorbed, and its value
  /// (which a `didSet` may have normalised) is the one delivered. Without an echo the value is read back, or, when
  /// a nested key-path write of the same property began during this one (from a `didSet`), the value the property
  /// held at that moment. The observers are taken before `write` runs and the slot's delivery turn is reserved, so
  /// nested changes — from a `didSet` or from observers — reach observers after this one, in order, and are never
  /// absorbed.
  @inlinable @MainActor
  func keyPathWrite<Value>(in slot: ObserverSlot, value: Value, readBack: () -> Value, write: () -> Void) {
    if !keyPathWrites.isEmpty { settleOuterWrites(of: slot) { readBack() } }
    let recipients = ChangeRecipients(first: snapshot(of: slot))
    let ownsDelivery = slot.reserveDelivery()
    keyPathWrites.append(KeyPathWrite(slot: ObjectIdentifier(slot)))
    write()
    let mark = keyPathWrites.removeLast()
    let delivered: Value
    if let settled = mark.settled {
      // The slot's value type was checked when it was resolved.
      delivered = settled as! Value
    } else if recipients.isEmpty {
      delivered = value
    } else {
      delivered = readBack()
    }
    slot.completeDelivery(delivered, to: recipients, owning: ownsDelivery)
  }

  /// A nested key-path write of `slot` begins: every outer write of it whose value is not settled yet settles on
  /// the value the property holds now.
  @usableFromInline @MainActor
  func settleOuterWrites(of slot: ObserverSlot, _ readBack: () -> Any) {
    let id = ObjectIdentifier(slot)
    var current: Any?
    for index in keyPathWrites.indices where keyPathWrites[index].slot == id && keyPathWrites[index].settled == nil {
      if current == nil { current = readBack() }
      keyPathWrites[index].settled = current
    }
  }

  /// Whether a notification of `slot` with `value` is the echo of the innermost key-path write (see
  /// `keyPathWrite`); then its value is recorded and the caller delivers nothing.
  @inlinable @MainActor
  func absorbsEcho<Value>(of slot: ObserverSlot, _ value: Value) -> Bool {
    if keyPathWrites.isEmpty { return false }
    return absorbsEchoSlowly(of: slot, value)
  }

  @usableFromInline @MainActor
  func absorbsEchoSlowly(of slot: ObserverSlot, _ value: Any) -> Bool {
    guard let last = keyPathWrites.indices.last, keyPathWrites[last].slot == ObjectIdentifier(slot),
      !keyPathWrites[last].echoed
    else { return false }
    keyPathWrites[last].echoed = true
    if keyPathWrites[last].settled == nil { keyPathWrites[last].settled = value }
    return true
  }
}

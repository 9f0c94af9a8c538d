/// The host of a state that lives at a key path of a class, for ``LoadableSupport`` and ``ProcessSupport``.
///
/// No stored property is asked of the class: hosts live in one main-actor table keyed by the instance's identity and
/// the key path, and only while a load runs. The table holds the host, the host holds the instance, so a model
/// stays alive while one of its loads runs — exactly as a `Task` that captures `self` would — and is released when
/// its last load ends: ending, cancelling or resetting a load removes its host from the table.
///
/// Instance identities can be reused after deallocation; that is harmless here because a host only exists while
/// it keeps its instance alive, and because load ids are never reused (a stale load never matches a new host).
@usableFromInline @MainActor
final class KeyPathHost<Model: AnyObject, State: ManagedState & Sendable>: StateHost {
  // Main-actor fields touched in short accesses that never span a call to user code: their dynamic exclusivity
  // checks are skipped (`@exclusivity(unchecked)`), as in `StateStorage`; so are those of the main-actor tables below.
  @usableFromInline let model: Model
  /// Reads and writes the state (see ``KeyPathAccess``); the key path itself is in `key`.
  @usableFromInline @exclusivity(unchecked) var access: KeyPathAccess<Model, State>
  @usableFromInline @exclusivity(unchecked) var tracker = LoadTracker()
  /// Key-path states have no declaration options.
  @inlinable var declaredSettings: LoadSettings? { nil }
  @usableFromInline @exclusivity(unchecked) var sharedHostReference: HostReference<KeyPathHost>?
  /// Only main-actor code holds a host: the table, the lookups and the engine (a load's task reaches it through
  /// `sharedHostReference`, which does not retain it).
  @inlinable static var isReleasedOnMainActorOnly: Bool { true }
  @usableFromInline let key: KeyPathHostKey
  /// The model's registry slot for `keyPath`, resolved once per host (that is, once per load); for a class that is
  /// not an ``ObservableModel``, the slot of the registry kept beside the state, once a controller observes it.
  @usableFromInline @exclusivity(unchecked) var link: SlotLink?
  /// Keeps a model registry's `link` valid (a registry kept beside the state is kept by `extras`).
  let anchor: ObserverSlot?

  @usableFromInline
  init(
    model: Model, keyPath: ReferenceWritableKeyPath<Model, State>, key: KeyPathHostKey,
    access: KeyPathAccess<Model, State>
  ) {
    self.model = model
    self.access = access
    self.key = key
    let modelLink = KeyPathHostKey.resolveLink(model, keyPath)
    anchor = modelLink?.anchor
    extras = KeyPathStateExtras.existing(for: model, key)
    link = modelLink ?? extras?.ownLink
  }

  deinit {
    sharedHostReference?.hostDidEnd()
  }

  @inlinable
  var currentState: State { access.read(model) }

  /// What outlives this host about its state (see ``KeyPathStateExtras``), once there is any.
  @usableFromInline @exclusivity(unchecked) var extras: KeyPathStateExtras?

  @usableFromInline
  var lastLoadCall: LoadCallMark? {
    get { extras?.lastLoadCall }
    set { makeExtras().lastLoadCall = newValue }
  }

  @usableFromInline
  var activityRecord: ActivityRecord? {
    get { extras?.activityRecord }
    set { makeExtras().activityRecord = newValue }
  }

  @usableFromInline
  func makeExtras() -> KeyPathStateExtras {
    if let extras { return extras }
    let made = KeyPathStateExtras.make(for: model, key)
    extras = made
    return made
  }

  @inlinable
  func store(_ state: State) {
    // The last value (`lastValue` of a key-path controller) changes only when a state that holds a value is replaced
    // by one that holds none, or by the reset state: a write of a value (every `yield` of `.loaded`) does nothing
    // here. The extras are made at the first such change, so a controller made later still sees it.
    if State.keepsLastValue, !state.holdsValue { keepLastValue(replacedBy: state) }
    if let storage = access.storage(in: model) {
      if let link { link.storedWrite(state, into: storage) } else { storage.pointee = state }
      return
    }
    let address: UInt
    if let link {
      let (written, settled) = link.keyPathWrite(state, of: model, through: access)
      address = written
      if settled { access.settles = true }
    } else {
      address = access.write(model, state)
    }
    if access.storedOffset < 0 { learnStorage(from: address) }
  }

  /// After the first write: when it went straight to a stored property of the model, later writes store there
  /// (see ``StoredProperties``).
  @usableFromInline
  func learnStorage(from address: UInt) {
    access.storedOffset = StoredProperties.offset(of: address, in: model, as: State.self)
  }

  /// The state is about to be replaced by `state`, which holds no value: a reset forgets the last value, and a
  /// state that holds one is kept. Out of line: it is not on the path of a write of a value.
  ///
  /// Kept in the state's slot (``ObserverSlotMainFields/keptState``): the model's registry slot of an
  /// ``ObservableModel``, or the slot kept beside the state of another class once a controller observes it — so a
  /// plain class's last value is kept from the moment it has a controller.
  @inlinable @inline(never)
  func keepLastValue(replacedBy state: State) {
    guard let link else { return }
    let fields = link.anchor.mainFields
    if state.isResetState {
      fields.pointee.keptState = nil
    } else {
      let old = currentState
      guard old.holdsValue else { return }
      if let kept = fields.pointee.keptState {
        // Reused: a slot belongs to one key path, so whatever it keeps is of this state type.
        unsafeDowncast(kept, to: KeptState<State>.self).state = old
      } else {
        fields.pointee.keptState = KeptState(old)
      }
    }
  }

  // MARK: Yields through an unretained reference
  //
  // A load's `yield` reaches its host without retaining it (`HostReference.storeIfCurrent`), which saves a retain and
  // a release on every yielded state. Invariant: the only strong references to a running host are the table's
  // (`KeyPathHostKey`) and those of main-actor code while it runs; the table drops its reference in `loadDidEnd` only.
  // So a host cannot be freed during an unretained write unless that write ends its load (an observer or a `didSet`
  // cancels or resets it, or starts a newer load); `loadDidEnd` then hands the table's reference to
  // `KeyPathHostKey.retired`, and the write releases it when it returns.

  /// How many unretained writes of this host are under way (nested writes are possible, from observers).
  @usableFromInline @exclusivity(unchecked) var unretainedWrites: UInt32 = 0
  /// The load ended during an unretained write: `KeyPathHostKey.retired` keeps the host until the write returns.
  @usableFromInline @exclusivity(unchecked) var isRetired = false

  @inlinable
  func storeUnretained(_ state: State) {
    unretainedWrites += 1
    store(state)
    unretainedWrites -= 1
    // Still alive here: held by the table, or retired (see above).
    if isRetired, unretainedWrites == 0 { KeyPathHostKey.release(retired: self) }
  }

  @inlinable
  func loadDidEnd() {
    if unretainedWrites != 0, !isRetired {
      isRetired = true
      KeyPathHostKey.retired.append(self)
    }
    KeyPathHostKey.forget(self, key)
  }

  /// The host of the running load at `keyPath` of `model`, if any.
  @inlinable
  static func running(_ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>) -> KeyPathHost? {
    if KeyPathHostKey.lastKeyPath == ObjectIdentifier(keyPath), KeyPathHostKey.lastInstance == ObjectIdentifier(model),
      let host = KeyPathHostKey.lastHost
    {
      // The same key path object means the same root and value types, so the host is of this type.
      return unsafeDowncast(host, to: KeyPathHost.self)
    }
    return KeyPathHostKey.runningHost(for: KeyPathHostKey(model, keyPath)) as? KeyPathHost
  }

  /// The host of the running load, or a new one registered as running (to start a load).
  @inlinable
  static func forLoad(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>, _ access: KeyPathAccess<Model, State>
  ) -> KeyPathHost {
    if let host = running(model, keyPath) { return host }
    let key = KeyPathHostKey(model, keyPath)
    let host = KeyPathHost(model: model, keyPath: keyPath, key: key, access: access)
    KeyPathHostKey.register(host, key)
    return host
  }

  /// Starts a load of `keyPath` of `model` (see `StateHost.start`).
  ///
  /// When the property is a `@Loadable`/`@Process` wrapper, the load is the wrapper's own (see ``WrapperLookup``):
  /// `$x`, `load(\.x)` and manual writes then share one bookkeeping and one delivery order.
  ///
  /// Always inlined into the key-path faces, which are inlined into their callers: there the compiler sees the
  /// caller's key path literal and reads the state as a plain property instead of through the key-path runtime.
  @inlinable @inline(__always) @discardableResult
  static func start(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>, _ access: KeyPathAccess<Model, State>,
    _ plan: LoadPlan<State>, silently: Bool,
    options: LoadOptions?, priority: TaskPriority?, refreshing: Bool = false
  ) -> Task<Void, Never> {
    let (current, storage) = WrapperLookup.read(model, keyPath)
    if let storage {
      return storage.start(
        plan, silently: silently, options: options, priority: priority, currentState: current, refreshing: refreshing)
    }
    return forLoad(model, keyPath, access).start(
      plan, silently: silently, options: options, priority: priority, currentState: current, refreshing: refreshing)
  }

  /// Starts a load of `keyPath` of `model` for an `async` caller (see `StateHost.startAwaited`).
  @inlinable @inline(__always)
  static func startAwaited(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>, _ access: KeyPathAccess<Model, State>,
    _ plan: LoadPlan<State>, silently: Bool,
    options: LoadOptions?, refreshing: Bool = false
  ) -> AwaitedLoad {
    let (current, storage) = WrapperLookup.read(model, keyPath)
    if let storage {
      return storage.startAwaited(
        plan, silently: silently, options: options, currentState: current, refreshing: refreshing)
    }
    return forLoad(model, keyPath, access).startAwaited(
      plan, silently: silently, options: options, currentState: current, refreshing: refreshing)
  }

  /// Cancels the running load of `keyPath` of `model`, if any.
  @inlinable
  static func cancel(_ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>) {
    if let storage = WrapperLookup.read(model, keyPath).storage {
      storage.cancelLoad()
    } else {
      running(model, keyPath)?.cancelLoad()
    }
  }

  /// Cancels the running load of `keyPath` of `model` and writes the reset state.
  @inlinable
  static func reset(_ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>) {
    if let storage = WrapperLookup.read(model, keyPath).storage {
      storage.resetState()
    } else {
      // The host of the running load, or a detached one (not in the table) for a one-off reset.
      let host =
        running(model, keyPath)
        ?? KeyPathHost(
          model: model, keyPath: keyPath, key: KeyPathHostKey(model, keyPath), access: KeyPathAccess(keyPath))
      host.resetState()
    }
  }
}

/// How a key-path host reads and writes its state: one closure made from the key path where the caller's key-path
/// literal is in view.
///
/// The key-path faces take their key path as an autoclosure and evaluate it twice: once for the state's identity
/// (the host's key), and once for this closure alone. Inlined into the caller, that second evaluation is a literal
/// whose only user is the closure, which uses it only to read and write the property — so the optimizer specializes
/// the closure on the literal (capture propagation): it compiles to plain property accesses, with no context to
/// allocate, instead of calls into the key-path runtime, which looks up metadata and allocates on every write. Given
/// a key path that is not a literal at the call, the closure applies it at run time, as `model[keyPath:]` would.
@usableFromInline
struct KeyPathAccess<Model: AnyObject, State> {
  /// What one call of ``apply`` does with its `state`.
  @usableFromInline
  enum Mode {
    /// Stores the property's state in `state`.
    case read
    /// Writes `state` (not `nil`), and leaves the replaced state in it.
    case write
    /// Writes `state` (not `nil`), and stores in it the state the property holds right after (a `didSet` may
    /// have normalised it).
    case writeReadingBack
  }

  /// Reads or writes the state (see ``Mode``). One closure, not several: capture propagation needs the literal to
  /// have a single user. `inout`, so that a write moves the state in and the replaced one out without copying
  /// either.
  ///
  /// A write returns the address it wrote through (see ``StoredProperties``); a read returns `0`.
  @usableFromInline let apply: (_ model: Model, _ state: inout State?, _ mode: Mode) -> UInt

  /// Where the property's storage is in the model, once a write found that the key path is a stored property of
  /// the model's class (see ``StoredProperties``); `0` when it is not, `-1` until a host's first write.
  @usableFromInline var storedOffset = -1

  /// Whether a write of the property settled on a value (see ``KeyPathWrites``), as one that notifies by itself
  /// does on every write: later writes then read the property back only when none settles, after the write,
  /// instead of always in the write's call.
  @usableFromInline var settles = false

  @inlinable @inline(__always)
  init(_ keyPath: ReferenceWritableKeyPath<Model, State>) {
    apply = { model, state, mode in
      if mode == .read {
        state = model[keyPath: keyPath]
        return 0
      }
      // A swap through an `inout` access, not an assignment: for a literal key path, an assignment is projected
      // with a retain and release of `model` around the store, an `inout` access as a plain store (measured).
      // The property sees one write of the new state, with its observers run once; a computed property is also
      // read once before it (an `inout` access of it is a get, then a set). Made inside `withUnsafeMutablePointer`
      // so that the write reports the address it went through (see `StoredProperties`).
      let address = withUnsafeMutablePointer(to: &model[keyPath: keyPath]) { property in
        swap(&property.pointee, &state!)
        return UInt(bitPattern: property)
      }
      if mode == .writeReadingBack { state = model[keyPath: keyPath] }
      return address
    }
  }

  /// An access that runs `apply` (for tests).
  init(apply: @escaping (_ model: Model, _ state: inout State?, _ mode: Mode) -> UInt) {
    self.apply = apply
  }

  /// The property's storage in `model`, when the key path is a stored property (see ``storedOffset``).
  @inlinable @inline(__always)
  func storage(in model: Model) -> UnsafeMutablePointer<State>? {
    if storedOffset <= 0 { return nil }
    return StoredProperties.storage(at: storedOffset, in: model, as: State.self)
  }

  @inlinable
  func read(_ model: Model) -> State {
    var state: State?
    _ = apply(model, &state, .read)
    // A read always stores the state.
    return state.unsafelyUnwrapped
  }

  /// Writes `state` and returns the address it was written through.
  @inlinable @discardableResult
  func write(_ model: Model, _ state: State) -> UInt {
    var value: State? = state
    return apply(model, &value, .write)
  }
}

/// Identifies a state by instance and key path in the table of running key-path loads.
@usableFromInline
struct KeyPathHostKey: Hashable {
  @usableFromInline let instance: ObjectIdentifier
  @usableFromInline let keyPath: AnyKeyPath

  @inlinable
  init(_ instance: AnyObject, _ keyPath: AnyKeyPath) {
    self.instance = ObjectIdentifier(instance)
    self.keyPath = keyPath
  }

  // The hosts of running key-path loads: the last one started in `lastHost`, found by the identities of its
  // instance and key path object without hashing (a property loaded again and again never touches the table), and
  // every other one in `table`. A host is in one of the two, never both; both are empty when no key-path load runs.

  /// The running hosts other than `lastHost`.
  @usableFromInline @MainActor @exclusivity(unchecked) static var table: [KeyPathHostKey: AnyObject] = [:]
  /// The host of the last load started on a state that had none running; not in `table`.
  @usableFromInline @MainActor @exclusivity(unchecked) static var lastHost: AnyObject?
  /// The key of `lastHost`; it holds the key path object, so the identities below are not reused meanwhile.
  @MainActor @exclusivity(unchecked) static var lastKey: KeyPathHostKey?
  /// The identities of `lastHost`'s instance and key path object, compared without reference counting. The host
  /// holds its instance, and `lastKey` the key path object.
  @usableFromInline @MainActor @exclusivity(unchecked) static var lastInstance: ObjectIdentifier?
  @usableFromInline @MainActor @exclusivity(unchecked) static var lastKeyPath: ObjectIdentifier?

  /// The running host for `key`, looked up by equality (another key path object may equal the host's).
  @usableFromInline @MainActor
  static func runningHost(for key: KeyPathHostKey) -> AnyObject? {
    if let lastHost, lastKey == key { return lastHost }
    return table.isEmpty ? nil : table[key]
  }

  /// Hosts whose load ended during a write that reaches them unretained (see `KeyPathHost.storeUnretained`), kept
  /// until that write returns.
  @usableFromInline @MainActor @exclusivity(unchecked) static var retired: [AnyObject] = []

  /// Releases a host kept in ``retired``, once the write that needed it returned.
  @usableFromInline @MainActor
  static func release(retired host: AnyObject) {
    guard let index = retired.firstIndex(where: { $0 === host }) else { return }
    // Released after the array's mutation: the host's `deinit` may release its model, whose `deinit` is user code.
    let released = retired.remove(at: index)
    withExtendedLifetime(released) {}
  }

  /// Every running host's key (for tests and diagnostics).
  @MainActor
  static var runningKeys: [KeyPathHostKey] {
    Array(table.keys) + (lastKey.map { [$0] } ?? [])
  }

  /// Records `host` as running for `key`; the previous `lastHost` moves to the table.
  @usableFromInline @MainActor
  static func register(_ host: AnyObject, _ key: KeyPathHostKey) {
    if let previous = lastHost, let previousKey = lastKey { table[previousKey] = previous }
    lastHost = host
    lastKey = key
    lastInstance = key.instance
    lastKeyPath = ObjectIdentifier(key.keyPath)
  }

  /// Forgets `host` (its load ended), if it is still the running host for `key`.
  @usableFromInline @MainActor
  static func forget(_ host: AnyObject, _ key: KeyPathHostKey) {
    if lastHost === host {
      lastHost = nil
      lastKey = nil
      lastInstance = nil
      lastKeyPath = nil
    } else if !table.isEmpty, table[key] === host {
      table[key] = nil
    }
  }

  // The slot link of the last host made, kept after its load ends, so that loading the same state again resolves
  // neither the model's conformance to `ObservableModel` nor its registry's slot. `parkedModel` is `unowned`: it
  // never keeps the model alive, but it keeps the model's memory from being freed (an unowned reference does), so
  // no other object can have `parkedInstance` as its identity while it is parked — a model with that identity is
  // the parked model itself. It is never read. (At most one dead model's bare memory is kept, until the next park.)
  // Without it, a new model at a dead one's address would get the dead model's slot: `KeyPathLifetimeTests`'
  // many short-lived observed models then miss notifications.
  @MainActor static var parkedInstance: ObjectIdentifier?
  @MainActor static unowned var parkedModel: AnyObject?
  @MainActor static var parkedKeyPath: AnyKeyPath?
  /// The model's slot for `parkedKeyPath`; `nil` when the model is not an ``ObservableModel``.
  @MainActor static var parkedAnchor: ObserverSlot?
  /// The model registry's slot link for `keyPath` of `model`, or `nil` when the model is not an
  /// ``ObservableModel`` (see ``SlotLink/resolve(_:keyPath:)``).
  @usableFromInline @MainActor
  static func resolveLink<Model: AnyObject, Value>(_ model: Model, _ keyPath: KeyPath<Model, Value>) -> SlotLink? {
    if parkedInstance == ObjectIdentifier(model), parkedKeyPath === keyPath {
      return parkedAnchor.map(SlotLink.init)
    }
    let link = SlotLink.resolve(model, keyPath: keyPath)
    parkedInstance = ObjectIdentifier(model)
    parkedModel = model
    parkedKeyPath = keyPath
    parkedAnchor = link?.anchor
    return link
  }
}

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

/// A key-path state's last state that held a value (see ``ObserverSlotMainFields/keptState``).
@usableFromInline
final class KeptState<State> {
  @usableFromInline var state: State

  @usableFromInline
  init(_ state: State) {
    self.state = state
  }
}

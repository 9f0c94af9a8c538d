/// How a key-path host reads and writes its state: one closure made where the caller's key-path literal is in view, so
/// the optimizer specializes it into plain property accesses (capture propagation needs the literal to have a single
/// user).
///
/// See Documentation/KeyPathWrites.md.
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
      // A swap through an `inout` access, not an assignment, which a literal key path projects with a retain and
      // release of `model` (measured); inside `withUnsafeMutablePointer`, to report the address written (see
      // `StoredProperties`).
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

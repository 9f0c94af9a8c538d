@_spi(Reflection) import Swift

/// Finds out whether a key-path write went straight to a stored property of the model, so that later writes can
/// store there without going through the key path.
///
/// Why: a write through a key path to a class's stored property always pays a dynamic exclusivity check (a call into
/// the runtime, about a sixth of a yielded change's time), even when the key path is a literal the optimizer turns
/// into a plain property access, and even when the property is declared `@exclusivity(unchecked)`.
///
/// How it is safe — the invariant: a write of a key path is a plain store, with no code of the model run, exactly
/// when the key path is one stored property of the model's class. Its first write goes through the key path as usual,
/// inside `withUnsafeMutablePointer`, which reports the address written through. That address is inside the model's
/// own memory at the offset of one of its stored properties of type `State` only when the key path's write stored
/// into that property in place: the key path runtime and the optimizer project a computed property — one with
/// `get`/`set`, `didSet`/`willSet`, a property wrapper, the `@Observable` macro's accessors, `lazy`, `weak` — through a
/// temporary, which is never inside the model (the model is alive and occupies that memory), and the value a key
/// path projects through an optional's `!` or a nested value has the type of that nested value, never the type of
/// the enclosing property at the same address (a type does not contain itself inline). A stored property's offset
/// is fixed for the class, so every later write of the same key path into the same model stores at that address;
/// the host holds its model, so the address stays valid.
///
/// What such a write does not do that a key-path write does: the dynamic exclusivity check. A write from inside an
/// `inout` access of the same property (for example a `yield` from a closure passed to a mutating method of the
/// state) is not diagnosed then — as with a property declared `@exclusivity(unchecked)`.
///
/// The stored properties of a class are read with the standard library's reflection (`_forEachField`, the field
/// offsets and types of the class and its superclasses), once per class; a class it cannot read keeps key-path
/// writes.
///
/// Off with `-D PROCESSED_NO_STORED_WRITES` (`swift test -Xswiftc -DPROCESSED_NO_STORED_WRITES`): every write then
/// goes through its key path. CI runs the suite once that way, so the key-path path stays correct on its own.
@usableFromInline @MainActor
enum StoredProperties {
  /// Whether key-path writes may be turned into stores (the compile-time switch above).
  #if PROCESSED_NO_STORED_WRITES
    nonisolated static let isEnabled = false
  #else
    nonisolated static let isEnabled = true
  #endif

  /// The stored properties of each class met, by offset: the type of each.
  @exclusivity(unchecked) static var fieldsByClass: [ObjectIdentifier: [Int: Any.Type]] = [:]
  /// The last answer, so that loading the same kind of state again costs a few comparisons.
  @exclusivity(unchecked) static var last: (model: ObjectIdentifier, state: ObjectIdentifier, at: Int, offset: Int)?

  /// The offset of the stored property of type `State` at `address` in `model`, or `0` when `address` is not one.
  @usableFromInline
  static func offset<State>(of address: UInt, in model: AnyObject, as type: State.Type) -> Int {
    guard isEnabled else { return 0 }
    let base = UInt(bitPattern: Unmanaged.passUnretained(model).toOpaque())
    let offset = Int(bitPattern: address &- base)
    let modelType = ObjectIdentifier(Swift.type(of: model))
    let stateType = ObjectIdentifier(State.self)
    if let last, last.model == modelType, last.state == stateType, last.at == offset { return last.offset }
    let fields: [Int: Any.Type]
    if let known = fieldsByClass[modelType] {
      fields = known
    } else {
      fields = storedFields(of: Swift.type(of: model))
      fieldsByClass[modelType] = fields
    }
    let found = fields[offset].map { $0 == State.self } == true ? offset : 0
    last = (modelType, stateType, offset, found)
    return found
  }

  /// The stored properties of `type` and its superclasses, by offset; none when the standard library cannot read
  /// them.
  static func storedFields(of type: AnyObject.Type) -> [Int: Any.Type] {
    var fields: [Int: Any.Type] = [:]
    // `.classType` (the standard library declares it as a mutable static, which strict concurrency refuses).
    let classType = _EachFieldOptions(rawValue: 1 << 0)
    let complete = _forEachField(of: type, options: classType) { _, offset, fieldType, _ in
      fields[offset] = fieldType
      return true
    }
    return complete ? fields : [:]
  }

  /// The storage of the stored property at `offset` in `model` (an offset ``offset(of:in:as:)`` returned).
  @inlinable @inline(__always)
  nonisolated static func storage<State>(at offset: Int, in model: AnyObject, as type: State.Type)
    -> UnsafeMutablePointer<State>
  {
    (UnsafeMutableRawPointer(Unmanaged.passUnretained(model).toOpaque()) + offset)
      .assumingMemoryBound(to: State.self)
  }
}

@_spi(Reflection) import Swift

/// Finds out whether a key-path write went straight to a stored property of the model, so that later writes store there
/// without the runtime's exclusivity check (a sixth of a yielded change).
///
/// Invariant: only an address inside the model at the offset of a stored property of exactly the state's type (found
/// with `_forEachField`) qualifies; computed properties never do. Off with `-D PROCESSED_NO_STORED_WRITES`. See
/// Documentation/KeyPathWrites.md.
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

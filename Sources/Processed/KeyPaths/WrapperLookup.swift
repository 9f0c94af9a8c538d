/// Finds the `@Loadable`/`@Process` storage behind a key path, so that the key-path faces drive the wrapper's own state
/// (one state, one owner): while a face reads its key path, the wrapper's enclosing-instance subscript offers its
/// storage.
///
/// Main-actor only; `target` is unretained, held by the probing face. See Documentation/KeyPathWrites.md.
@usableFromInline @MainActor
enum WrapperLookup {
  /// The key path being probed; `nil` when no probe is active (the wrappers' getters check only this).
  @usableFromInline static var target: Unmanaged<AnyKeyPath>?
  /// The storage offered for `target`.
  @usableFromInline static var found: AnyObject?

  /// Reads `model[keyPath: keyPath]` and returns it with the wrapper storage behind it, if any.
  @inlinable @inline(__always)
  static func read<Model: AnyObject, State>(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>
  ) -> (state: State, storage: StateStorage<State>?) {
    let outer = (target, found)
    target = .passUnretained(keyPath)
    found = nil
    let state = model[keyPath: keyPath]
    let storage = found
    (target, found) = outer
    guard let storage else { return (state, nil) }
    // The storage offered itself for a key path equal to `keyPath`, so its state type is `State`.
    assert(storage is StateStorage<State>, "Processed: a wrapper offered a storage of another type")
    return (state, unsafeDowncast(storage, to: StateStorage<State>.self))
  }

  /// Called by a wrapper's enclosing-instance getter while a probe is active.
  @usableFromInline
  static func offer(_ storage: AnyObject, for keyPath: AnyKeyPath) {
    guard found == nil, let target else { return }
    let probed = target.takeUnretainedValue()
    if probed === keyPath || probed == keyPath {
      found = storage
    }
  }
}

/// The mutations of one key that have not all ended (see ``LoadCache/mutate(_:optimistic:operation:)``): their updates
/// in the order they started, and the base they apply to.
///
/// What the key shows is the base — the last value written by a fetch or by `set`, never an optimistic one — with the
/// update of every mutation that has not failed applied again, in order. A succeeded mutation's update is kept here
/// after its call returned (it may be needed again until then), until the last mutation of the key ends and the key is
/// invalidated, once.
@MainActor
final class KeyMutations<Value: Sendable>: AnyKeyMutations {
  struct Mutation {
    let id: UInt64
    /// `nil` for a mutation that started while the key had no value: its update is never called.
    let update: (@MainActor (inout Value) -> Void)?
  }

  /// The mutations that have not failed, in the order they started.
  var mutations: [Mutation] = []
  /// The value the updates apply to; `nil` when the key had no value when its first mutation started.
  var base: Value?
  private var lastID: UInt64 = 0

  /// What the key shows: the base with every update applied in order; `nil` with no base.
  var shown: Value? {
    guard var value = base else { return nil }
    for mutation in mutations { mutation.update?(&value) }
    return value
  }

  func add(_ update: (@MainActor (inout Value) -> Void)?) -> UInt64 {
    lastID &+= 1
    mutations.append(Mutation(id: lastID, update: update))
    running += 1
    return lastID
  }

  /// A mutation's operation failed: its update is dropped.
  func fail(_ id: UInt64) {
    mutations.removeAll { $0.id == id }
    running -= 1
  }

  /// A mutation's operation succeeded: its update stays until the last mutation ends.
  func succeed(_ id: UInt64) {
    running -= 1
  }

  /// The last mutation ended: the updates go (the invalidation that follows fetches what replaces them).
  func end() {
    mutations.removeAll()
  }
}

/// The mutations of a key, whatever its value type (what the cache keeps by key).
@MainActor
class AnyKeyMutations {
  /// How many operations have not ended.
  var running = 0
  /// Set by `remove`/`removeAll`: mutations ending afterwards write and invalidate nothing.
  var isDetached = false
}

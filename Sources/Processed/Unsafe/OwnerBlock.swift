/// A block of an actor-owned state, carried through the main actor's cache and engine to run on its owner: the fetch
/// of a cached load, the page fetch of a `loadMore`, the block of a calmly presented load (see ``StateMirror``).
///
/// The block is not `Sendable` (it may touch the actor's state synchronously). The box is `@unchecked Sendable` under
/// invariant 15 of Unsafe/README.md: the block is called only by ``run(_:)``, which runs it with `owner` as its
/// isolation — so on the actor where it was formed, and one call at a time there.
@usableFromInline
final class OwnerBlock<Input: Sendable, Output: Sendable>: @unchecked Sendable {
  @usableFromInline let block: nonisolated(nonsending) (Input) async throws -> Output
  /// The actor the block was formed on. Weak: a cache entry keeps the block of its last fetch (to fetch again), and
  /// must not keep the actor alive through it — only what the block itself captures.
  @usableFromInline weak let owner: (any Actor)?

  @inlinable
  init(_ block: nonisolated(nonsending) @escaping (Input) async throws -> Output, owner: isolated (any Actor)) {
    self.block = block
    self.owner = owner
  }

  /// Runs the block on its owner; throws `CancellationError` when the owner is gone (nothing is left to run it).
  @inlinable
  func run(_ input: Input) async throws -> Output {
    guard let owner else { throw CancellationError() }
    return try await Self.call(block, input, isolation: owner)
  }

  @inlinable
  static func call(
    _ block: nonisolated(nonsending) (Input) async throws -> Output, _ input: Input,
    isolation: isolated (any Actor)
  ) async throws -> Output {
    try await block(input)
  }
}

/// A block of an actor-owned state, carried through the main actor's cache and engine to run on its owner: the fetch
/// of a cached load, the page fetch of a `loadMore`, the block of a calmly presented load (see ``StateMirror``).
///
/// The block is not `Sendable` (it may touch the actor's state synchronously). The box is `@unchecked Sendable` under
/// invariant 15 of Unsafe/README.md: the block is called only by ``run(_:)``, which runs it with `owner` as its
/// isolation — so on the actor where it was formed, and one call at a time there.
///
/// The box keeps the caller's block itself, in a stored property, never a closure around it nor an enum's payload
/// (Swift 6.3, measured by `IsolatedCacheTests`): a closure formed here, outside the actor, is `@concurrent`, and a block
/// taken out of an enum's payload is called as one — either runs the block off the actor. (A block the caller formed
/// with a capture list is `@concurrent` already: it runs off the actor wherever it is called; see
/// LoadsOwnedByAnActor.md.)
@usableFromInline
final class OwnerBlock<Input: Sendable, Output: Sendable>: @unchecked Sendable {
  /// The caller's block, as it was given: one of the two is set.
  @usableFromInline let plain: Plain?
  @usableFromInline let taking: Taking?
  /// The actor the block was formed on. Weak: a cache entry keeps the block of its last fetch (to fetch again), and
  /// must not keep the actor alive through it — only what the block itself captures.
  @usableFromInline weak let owner: (any Actor)?

  @usableFromInline typealias Plain = nonisolated(nonsending) () async throws -> Output
  @usableFromInline typealias Taking = nonisolated(nonsending) (Input) async throws -> Output

  /// A block without an input (a fetch): `run(())` calls it.
  @inlinable
  init(_ block: nonisolated(nonsending) @escaping () async throws -> Output, owner: any Actor) where Input == Void {
    plain = block
    taking = nil
    self.owner = owner
  }

  /// A block that takes an input (a page's cursor).
  @inlinable
  init(taking block: nonisolated(nonsending) @escaping (Input) async throws -> Output, owner: any Actor) {
    plain = nil
    taking = block
    self.owner = owner
  }

  /// Runs the block on its owner; throws `CancellationError` when the owner is gone (nothing is left to run it).
  @inlinable
  func run(_ input: Input) async throws -> Output {
    guard let owner else { throw CancellationError() }
    return try await call(input, isolation: owner)
  }

  @inlinable
  func call(_ input: Input, isolation: isolated (any Actor)) async throws -> Output {
    if let plain { return try await plain() }
    guard let taking else { preconditionFailure("Processed: an owner block without a block") }
    return try await taking(input)
  }
}

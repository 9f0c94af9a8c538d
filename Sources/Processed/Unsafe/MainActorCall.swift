/// Calls a main-actor function from code that found the main actor current (`MainQueue.isCurrent`) but is not
/// statically isolated to it, without `MainActor.assumeIsolated` — which allocates an object on each call (measured with
/// heaptrack: one per `LoadCache.remove(_:)` on the main actor, the cached miss cycle's extra allocation).
///
/// Sound under invariant 9 of Unsafe/README.md: the caller has checked `MainQueue.isCurrent`, so the function runs on
/// the main actor's executor, as its type says. A global actor's function type has the same representation as a plain
/// one, which is what `assumeIsolated` itself relies on; `body` is a closure that captures nothing (the values it needs
/// are its arguments), so passing it allocates nothing either.
@inlinable @inline(__always)
func callAsMainActor<A, B, Result>(_ body: @escaping @MainActor (A, B) -> Result, _ a: A, _ b: B) -> Result {
  unsafeBitCast(body, to: ((A, B) -> Result).self)(a, b)
}

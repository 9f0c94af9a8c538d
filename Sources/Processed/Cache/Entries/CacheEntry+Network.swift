/// An entry's fetch under ``NetworkMode/online`` asks its cache for the network before each attempt (see
/// ``NetworkGate``): offline, it pauses — no permit, no timeout, nothing written — and every state waiting for it shows
/// ``LoadActivity/Phase/paused``.
extension CacheEntry: NetworkGate {
  @usableFromInline var isOnline: Bool { store.networkWaiters.isOnline }

  @usableFromInline func waitUntilOnline() async -> Bool {
    await store.networkWaiters.wait()
  }

  @usableFromInline func loadPaused(_ paused: Bool) {
    showPaused(paused)
  }

  /// Whether the entry's fetch waits for the network now.
  @inlinable var isPaused: Bool { isFetching && activityRecord?.phase == .paused }

  /// `plan`, asking the network before each attempt when `options` (the fetch's) say `.online` and that can matter:
  /// the cache is offline now, or a retry may continue later. An online fetch without retries stays on the plain path.
  @inlinable func gated(_ plan: LoadPlan<State>, options: LoadOptions?) -> LoadPlan<State> {
    guard options?.networkMode ?? .online == .online, !isOnline || (options?.retry.maxRetries ?? 0) > 0 else {
      return plan
    }
    var plan = plan
    plan.network = self
    return plan
  }

  /// Every bound state that waits for the fetch shows `.paused` (`paused`) or a running load again — but `caller`,
  /// whose own waiting load starts right after (``CachedLoad`` shows it paused then).
  @usableFromInline func showPaused(_ paused: Bool, except caller: CacheBinding<Value>? = nil) {
    let bound = bindings
    for index in bound.indices {
      let binding = bound[index]
      guard binding !== caller, binding.isWaiting, let host = binding.host() else { continue }
      let shown = host.activityRecord?.phase == .paused
      if paused != shown { host.enter(paused ? .paused : .running(attempt: 1)) }
    }
  }
}

extension LoadCache {
  /// Tells the cache whether the app is focused (in the foreground, its window key). Callable from any isolation.
  ///
  /// When focus returns (`false` → `true`), every entry that has a bound state and a stale value fetches again once,
  /// in the background (no `.loading`); fresh entries and entries no state shows do not. At most one such refetch per
  /// entry per ``revalidationThrottle``, however often focus toggles. Polling (``LoadOptions/refetchInterval``) stops
  /// while the cache is not focused, unless ``LoadOptions/refetchInBackground``; when focus returns, a poll that fell
  /// due meanwhile runs at once (once). Processed ships no platform monitor: tell it from `scenePhase`, say. See
  /// <doc:Revalidating>.
  ///
  /// ```swift
  /// .onChange(of: scenePhase) { _, phase in cache.setFocused(phase == .active) }
  /// ```
  ///
  /// - Parameter focused: Whether the app is focused now. The cache starts focused.
  public func setFocused(_ focused: Bool) {
    store.environment.withLock { $0.isFocused = focused }
    store.onMainActor { $0.environmentChanged() }
  }

  /// Tells the cache whether the network is reachable. Callable from any isolation.
  ///
  /// When the network comes back (`false` → `true`), every entry that has a bound state and a stale value fetches again
  /// once — also while the cache is not focused — under the same throttle as focus (one window per entry).
  ///
  /// ```swift
  /// monitor.pathUpdateHandler = { path in cache.setOnline(path.status == .satisfied) }
  /// ```
  ///
  /// - Parameter online: Whether the network is reachable now. The cache starts online.
  public func setOnline(_ online: Bool) {
    store.environment.withLock { $0.isOnline = online }
    store.published.withLock { $0.isOnline = online }
    store.onMainActor { $0.environmentChanged() }
  }

  /// Whether the cache is focused, as last told by ``setFocused(_:)`` (`true` until then).
  public var isFocused: Bool { store.environment.withLock { $0.isFocused } }

  /// Whether the network is reachable, as last told by ``setOnline(_:)`` (`true` until then).
  public var isOnline: Bool { store.environment.withLock { $0.isOnline } }

  /// At most one refetch per entry in this window when focus or the network returns (measured from the last one that
  /// ran, on the cache's clock).
  public var revalidationThrottle: Duration { store.revalidationThrottle }
}

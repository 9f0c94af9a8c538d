extension LoadOptions {
  /// The part of a call's options that acts on a shared fetch (a cache entry's, or a page's): retry, timeout, limiter,
  /// stale time, polling, network mode and clock. Debounce and overlap act on the calling state before the call
  /// reaches the fetch, and calm presentation on the screens that wait for it (``forScreen``): the fetch has none.
  @inlinable
  var forFetch: LoadOptions {
    var options = self
    options.update {
      $0.debounce = nil
      $0.overlap = .cancelRunning
      $0.loadingDelay = nil
      $0.minimumLoadingTime = nil
      $0.cancellation = .keepState
    }
    return options
  }

  /// The part of a call's options that acts on the state whose screen waits for a shared fetch: its loading delay,
  /// minimum loading time and cancellation behaviour, on the options' clock (the rest is the fetch's: ``forFetch``).
  @inlinable
  var forScreen: LoadOptions {
    LoadOptions(
      loadingDelay: loadingDelay, minimumLoadingTime: minimumLoadingTime, cancellation: cancellation, clock: clock)
  }
}

/// How a load runs: its retry policy, timeout, debounce, overlap policy, limiter and the clock every wait sleeps on.
///
/// Give options to a declaration — `@Loadable(options: o) var feed: LoadableState<[Item]>` — or to one call —
/// `$feed.load(options: o) { … }`. Options given to a call replace the declaration's as a whole; `nil` means the
/// declaration's (`.default` for key-path states).
///
/// ```swift
/// @MainActor
/// final class FeedModel {
///   @Loadable(options: LoadOptions(timeout: .seconds(10))) var feed: LoadableState<[String]>
///
///   func refresh() {
///     $feed.load { try await api.feed() }  // ends with .error(TimeoutError()) after 10 s
///   }
/// }
/// ```
///
/// Every wait the library makes sleeps on ``clock``; with a manual clock (`TestClock` from `ProcessedTesting`), a
/// test controls time completely.
///
/// A load with options moves through phases: it waits out its ``debounce`` (writing nothing), writes its start
/// state, waits for a permit of its ``limiter``, runs an attempt (ended early by the ``timeout``) and, after a
/// failure its ``retry`` policy retries, waits and goes again. Every phase keeps the rules of a plain load: a newer
/// call, a cancel, a reset or a manual write stops it at once, and a load that stopped never writes again. See
/// <doc:Retrying>, <doc:Debouncing>, <doc:JoiningARunningLoad> and <doc:LimitingConcurrentLoads>.
public struct LoadOptions: Sendable {
  /// Every field, in one immutable box: a `LoadOptions` is one reference, so copying one (a load carries its options
  /// through several calls) is a retain rather than a copy of every field, and `nil` options are a null word. A
  /// write makes a new box (see `LoadOptions+Fields.swift`).
  @usableFromInline var box: Box

  /// Whether and how a failed attempt is retried. Default: ``RetryPolicy/never``.
  @inlinable public var retry: RetryPolicy {
    get { box.fields.retry }
    set { update { $0.retry = newValue } }
  }
  /// How long one attempt may run before it ends with ``TimeoutError`` (which ``retry`` may retry); `nil` (the
  /// default): no limit. Zero or negative: the attempt ends at once, without running the block.
  @inlinable public var timeout: Duration? {
    get { box.fields.timeout }
    set { update { $0.timeout = newValue } }
  }
  /// Whether a load waits before it starts, and how. Default: `nil`, no debounce.
  @inlinable public var debounce: Debounce? {
    get { box.fields.debounce }
    set { update { $0.debounce = newValue } }
  }
  /// What a load call does while a load of the same state is in progress. Default: ``OverlapPolicy/cancelRunning``.
  @inlinable public var overlap: OverlapPolicy {
    get { box.fields.overlap }
    set { update { $0.overlap = newValue } }
  }
  /// A limiter shared with other states, which caps how many blocks run at once. Default: `nil`, no limit.
  @inlinable public var limiter: LoadLimiter? {
    get { box.fields.limiter }
    set { update { $0.limiter = newValue } }
  }
  /// For a load of a ``CacheKey`` in a ``LoadCache``: how long a value written to the cache stays fresh (a load of a
  /// fresh value writes it and runs no block). `nil` (the default): the cache's own `staleTime`.
  @inlinable public var staleTime: Duration? {
    get { box.fields.staleTime }
    set { update { $0.staleTime = newValue } }
  }
  /// How long a load may run before its start state (`.loading`, `.running(kind)`) is written: a load that ends
  /// sooner writes only its result, so a fast load never flashes a spinner. `nil` (the default), zero or negative:
  /// the start state is written at once. See <doc:CalmPresentation>.
  @inlinable public var loadingDelay: Duration? {
    get { box.fields.loadingDelay }
    set { update { $0.loadingDelay = newValue } }
  }
  /// Once a load's start state is on screen, how long before its result may replace it: a spinner never blinks.
  /// A newer load, `cancel()`, `reset()` and a manual write still act at once. `nil` (the default), zero or
  /// negative: no minimum. See <doc:CalmPresentation>.
  @inlinable public var minimumLoadingTime: Duration? {
    get { box.fields.minimumLoadingTime }
    set { update { $0.minimumLoadingTime = newValue } }
  }
  /// What a cancelled load leaves on screen. Default: ``CancellationBehavior/keepState``.
  @inlinable public var cancellation: CancellationBehavior {
    get { box.fields.cancellation }
    set { update { $0.cancellation = newValue } }
  }
  /// For a load of a ``CacheKey``: while a state is bound to the entry and the cache is focused, the entry fetches
  /// again every interval on the cache's clock, counted from the end of its last fetch (staleness aside). `nil` (the
  /// default): no polling. See <doc:Revalidating>.
  @inlinable public var refetchInterval: Duration? {
    get { box.fields.refetchInterval }
    set { update { $0.refetchInterval = newValue } }
  }
  /// Whether ``refetchInterval`` polls also while the cache is not focused. Default: `false`.
  @inlinable public var refetchInBackground: Bool {
    get { box.fields.refetchInBackground }
    set { update { $0.refetchInBackground = newValue } }
  }
  /// For a load of a ``CacheKey``: whether its entry's fetch waits while the cache is offline (``NetworkMode/online``,
  /// the default; its activity is then ``LoadActivity/Phase/paused``) or ignores the network (``NetworkMode/always``).
  /// A load without a cache ignores it. See <doc:Revalidating>.
  @inlinable public var networkMode: NetworkMode {
    get { box.fields.networkMode }
    set { update { $0.networkMode = newValue } }
  }
  /// The clock every wait of the load sleeps on: interrupts, the timeout, retry delays, debounce, the loading delay
  /// and the minimum loading time. Default:
  /// `ContinuousClock()`.
  @inlinable public var clock: any Clock<Duration> {
    get { box.fields.clock }
    set { update { $0.clock = newValue } }
  }

  /// Creates options; every argument has the default a load has without options.
  ///
  /// ```swift
  /// let options = LoadOptions(timeout: .seconds(5), clock: ContinuousClock())
  /// ```
  ///
  /// - Parameters:
  ///   - retry: Whether and how a failed attempt is retried.
  ///   - timeout: How long one attempt may run.
  ///   - debounce: Whether a load waits before it starts.
  ///   - overlap: What a call does while a load is in progress.
  ///   - limiter: A limiter shared with other states.
  ///   - staleTime: How long a cached value stays fresh; `nil`: the cache's.
  ///   - loadingDelay: How long a load may run before its start state is written.
  ///   - minimumLoadingTime: How long a start state on screen stays before the result replaces it.
  ///   - cancellation: What a cancelled load leaves on screen.
  ///   - refetchInterval: For a cached load: how often its entry fetches again while a state is bound to it.
  ///   - refetchInBackground: Whether that polling goes on while the cache is not focused.
  ///   - networkMode: For a cached load: whether its fetch waits while the cache is offline.
  ///   - clock: The clock every wait sleeps on.
  public init(
    retry: RetryPolicy = .never, timeout: Duration? = nil, debounce: Debounce? = nil,
    overlap: OverlapPolicy = .cancelRunning, limiter: LoadLimiter? = nil, staleTime: Duration? = nil,
    loadingDelay: Duration? = nil, minimumLoadingTime: Duration? = nil,
    cancellation: CancellationBehavior = .keepState, refetchInterval: Duration? = nil,
    refetchInBackground: Bool = false, networkMode: NetworkMode = .online,
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    box = Box(
      Fields(
        retry: retry, timeout: timeout, debounce: debounce, overlap: overlap, limiter: limiter, staleTime: staleTime,
        loadingDelay: loadingDelay, minimumLoadingTime: minimumLoadingTime, cancellation: cancellation,
        refetchInterval: refetchInterval, refetchInBackground: refetchInBackground, networkMode: networkMode,
        clock: clock))
  }

  /// The options of a load that was given none: no retry, no timeout, no debounce, `.cancelRunning`, no limiter, no
  /// loading delay or minimum, `.keepState`, no polling, `.online`, `ContinuousClock()`.
  ///
  /// ```swift
  /// var options = LoadOptions.default
  /// options.timeout = .seconds(30)
  /// ```
  public static var `default`: LoadOptions { LoadOptions() }
}

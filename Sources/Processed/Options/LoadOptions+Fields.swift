extension LoadOptions {
  /// The stored fields of ``LoadOptions``, held in its ``Box``.
  @usableFromInline
  struct Fields: Sendable {
    @usableFromInline var retry: RetryPolicy
    @usableFromInline var timeout: Duration?
    @usableFromInline var debounce: Debounce?
    @usableFromInline var overlap: OverlapPolicy
    @usableFromInline var limiter: LoadLimiter?
    @usableFromInline var staleTime: Duration?
    @usableFromInline var loadingDelay: Duration?
    @usableFromInline var minimumLoadingTime: Duration?
    @usableFromInline var cancellation: CancellationBehavior
    @usableFromInline var refetchInterval: Duration?
    @usableFromInline var refetchInBackground: Bool
    @usableFromInline var networkMode: NetworkMode
    @usableFromInline var clock: any Clock<Duration>

    @usableFromInline
    init(
      retry: RetryPolicy, timeout: Duration?, debounce: Debounce?, overlap: OverlapPolicy, limiter: LoadLimiter?,
      staleTime: Duration?, loadingDelay: Duration?, minimumLoadingTime: Duration?,
      cancellation: CancellationBehavior, refetchInterval: Duration?, refetchInBackground: Bool,
      networkMode: NetworkMode, clock: any Clock<Duration>
    ) {
      self.retry = retry
      self.timeout = timeout
      self.debounce = debounce
      self.overlap = overlap
      self.limiter = limiter
      self.staleTime = staleTime
      self.loadingDelay = loadingDelay
      self.minimumLoadingTime = minimumLoadingTime
      self.cancellation = cancellation
      self.refetchInterval = refetchInterval
      self.refetchInBackground = refetchInBackground
      self.networkMode = networkMode
      self.clock = clock
    }
  }

  /// The immutable box of a ``LoadOptions`` value's fields. Values share a box until one of them is written, which
  /// gives the written value a box of its own: a box never changes, so sharing it across threads is safe.
  @usableFromInline
  final class Box: Sendable {
    @usableFromInline let fields: Fields

    @usableFromInline
    init(_ fields: Fields) {
      self.fields = fields
    }
  }

  /// Writes the fields through `change`, into a new box (the old one may be shared).
  @inlinable
  mutating func update(_ change: (inout Fields) -> Void) {
    var fields = box.fields
    change(&fields)
    box = Box(fields)
  }
}

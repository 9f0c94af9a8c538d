extension LoadOptions {
  /// A load's options, decided once per call — the call's own, else its state's declared ones — and boxed: a
  /// ``LoadOptions`` value is large (its clock is an existential), and a load without options, the common case,
  /// carries one word for them (`nil`), not the whole value.
  @usableFromInline
  final class Resolved: Sendable {
    @usableFromInline let options: LoadOptions
    /// Whether the options change how a call starts (a debounce, or `.joinRunning`), read where the call starts.
    @usableFromInline let shapesTheStart: Bool
    /// Whether the options ask for nothing but their clock (see ``LoadOptions/isPlain``).
    @usableFromInline let isPlain: Bool
    /// The loading delay, `nil` when it does not wait (zero, negative or none).
    @usableFromInline let loadingDelay: Duration?
    /// The minimum loading time, `nil` when there is none (zero, negative or none).
    @usableFromInline let minimumLoadingTime: Duration?
    /// Whether a cancelled load writes back the state its start state replaced.
    @usableFromInline let restoresOnCancel: Bool
    /// Whether the load keeps a record of its start state on screen (``StartOnScreen``): it has a loading delay, a
    /// minimum loading time or restores on cancel.
    @usableFromInline let presentsCalmly: Bool

    @usableFromInline
    init(_ options: LoadOptions) {
      self.options = options
      shapesTheStart = options.debounce != nil || options.overlap == .joinRunning
      isPlain = options.isPlain
      loadingDelay = options.loadingDelay.flatMap { $0 > .zero ? $0 : nil }
      minimumLoadingTime = options.minimumLoadingTime.flatMap { $0 > .zero ? $0 : nil }
      restoresOnCancel = options.cancellation == .restorePreviousState
      presentsCalmly = loadingDelay != nil || minimumLoadingTime != nil || restoresOnCancel
    }

    /// The clock every wait of the load sleeps on.
    @inlinable
    var clock: any Clock<Duration> { options.clock }
  }

  /// Whether the options ask for no policy — no retry, timeout, debounce, join, limiter or calm presentation — so
  /// that only their clock could matter, and only to a load with interrupts.
  @inlinable
  var isPlain: Bool {
    retry.maxRetries <= 0 && timeout == nil && debounce == nil && overlap == .cancelRunning && limiter == nil
      && (loadingDelay ?? .zero) <= .zero && (minimumLoadingTime ?? .zero) <= .zero && cancellation == .keepState
  }
}

extension LoadOptions {
  /// The clock of a load that was given no options, or options whose clock was not read (`LoadOptions.default`'s):
  /// the one place that says a load without a clock sleeps on `ContinuousClock`.
  @inlinable
  static func clock(of options: Resolved?) -> any Clock<Duration> {
    options?.clock ?? ContinuousClock()
  }
}

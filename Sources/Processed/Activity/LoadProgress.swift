/// How far a load has come, as its block reports it.
///
/// ```swift
/// $upload.run {
///   for (index, chunk) in chunks.enumerated() {
///     try await api.send(chunk)
///     LoadProgress.report(fraction: Double(index + 1) / Double(chunks.count), message: "chunk \(index + 1)")
///   }
/// }
/// ```
public struct LoadProgress: Sendable, Equatable {
  /// The fraction done, in `0...1`; `nil` when the progress is indeterminate. Values outside are clamped to the
  /// range, NaN becomes `nil`.
  public var fraction: Double? {
    get { storedFraction }
    set { storedFraction = Self.clamped(newValue) }
  }
  /// A line to show beside it.
  public var message: String?
  private var storedFraction: Double?

  /// Creates a progress value.
  ///
  /// ```swift
  /// let halfway = LoadProgress(fraction: 0.5, message: "page 2 of 4")
  /// ```
  ///
  /// - Parameters:
  ///   - fraction: The fraction done; clamped to `0...1`; `nil` or NaN: indeterminate.
  ///   - message: A line to show beside it.
  public init(fraction: Double? = nil, message: String? = nil) {
    storedFraction = Self.clamped(fraction)
    self.message = message
  }

  /// Reports the progress of the load whose block is running this code (or code that inherits its task's context:
  /// functions it calls, `Task { }` it starts). The load's ``LoadActivity/progress`` becomes this value and
  /// `observeActivity` observers hear of it.
  ///
  /// It works from the load's owner: the main actor for `@Loadable`, `@Process`, ``LoadableSupport`` and
  /// ``ProcessSupport``; the owning actor for `@IsolatedLoadable` and `@IsolatedProcess`. `isolation` is the caller's,
  /// and a report made from another isolation, or from none (a nonisolated `async` function the block awaits, say),
  /// is dropped: report from the block, or from code isolated to the same actor.
  ///
  /// ```swift
  /// $feed.load {
  ///   LoadProgress.report(fraction: 0, message: "connecting")
  ///   let page = try await api.firstPage()
  ///   LoadProgress.report(fraction: 0.5, message: "first page")
  ///   return page + (try await api.secondPage())
  /// }
  /// ```
  ///
  /// A report from a load that is no longer current (superseded, cancelled — also through its `Task` — reset,
  /// ended), from outside any load, or from a detached task does nothing. The progress is cleared when the load
  /// ends.
  ///
  /// - Parameters:
  ///   - fraction: The fraction done; clamped to `0...1`; `nil` or NaN: indeterminate.
  ///   - message: A line to show beside it.
  ///   - isolation: Where the report is made; the default is the caller's isolation. Only the load's owner's counts.
  public static func report(
    fraction: Double?, message: String? = nil, isolation: isolated (any Actor)? = #isolation
  ) {
    // A load whose task was cancelled can no longer write: its reports are dropped too.
    guard let load = LoadContext.current, !Task.isCancelled else { return }
    load.sink.reportProgress(LoadProgress(fraction: fraction, message: message), from: load.id, isolation: isolation)
  }

  private static func clamped(_ fraction: Double?) -> Double? {
    guard let fraction, !fraction.isNaN else { return nil }
    return min(1, max(0, fraction))
  }
}

/// The load a task runs, for ``LoadProgress/report(fraction:message:)``: a task-local value bound around a load's
/// block.
@usableFromInline
struct LoadContext: Sendable {
  @usableFromInline let id: UInt64
  @usableFromInline let sink: any ProgressSink

  @inlinable
  init(id: UInt64, sink: any ProgressSink) {
    self.id = id
    self.sink = sink
  }

  /// The task-local binding (a plain `TaskLocal` value rather than the `@TaskLocal` wrapper, whose projection the
  /// engine's inlined code could not reach).
  @usableFromInline static let binding = TaskLocal<LoadContext?>(wrappedValue: nil)

  /// The load the current task runs, if any.
  static var current: LoadContext? { binding.get() }
}

/// Receives progress reports for the loads of one host.
@usableFromInline
protocol ProgressSink: AnyObject, Sendable {
  /// Keeps `progress` for load `id` when the report comes from the load's owner (`isolation`); drops it otherwise.
  func reportProgress(_ progress: LoadProgress, from id: UInt64, isolation: isolated (any Actor)?)
}

/// Caps how many load blocks run at once across the states that share it.
///
/// Give one limiter to the options of every load it should cap — of one state or of thousands:
///
/// ```swift
/// let downloads = LoadLimiter(maxConcurrent: 4)
/// let options = LoadOptions(limiter: downloads)
///
/// for row in rows {
///   row.$thumbnail.load(options: options) { try await api.thumbnail(row.id) }
/// }
/// // At most 4 blocks run at once; the others show .loading and wait their turn, first come, first served.
/// ```
///
/// A load with a limiter writes its start state when it is called (unless silent), waits for a permit in the order
/// the loads asked for one, runs its block holding it and gives it back when the block ends — for a block that
/// ignores cancellation, when it actually returns. While it waits to retry it holds no permit and queues again for the
/// next attempt.
///
/// A waiting load that is superseded, cancelled or reset, or whose `async` caller is cancelled, leaves the queue at
/// once and never runs its block. ``running`` and ``waiting`` count the loads that have reached the limiter — a load
/// reaches it when its task starts, on the main actor right after the call (its activity is `.waiting` from the
/// call on) — and return to 0 when all is done: no permit is leaked, no waiter skipped.
///
/// > Note: A limiter counts blocks, not states: two loads of one state never hold two permits, because a newer load
/// > supersedes the older one — but a superseded block that ignores cancellation keeps its permit until it returns.
///
/// > Important: A limiter is not reentrant, like any semaphore. A block that *awaits* a load needing a permit of the
/// > limiter whose permit it holds — of the same state (`await $x.load(options: o) { await $x.load(options: o) { 2 };
/// > return 1 }`) or of another — waits for as long as no other permit frees up: with `maxConcurrent: 1`, forever.
/// > Start the inner load without awaiting it, or give it options without this limiter.
public final class LoadLimiter: Sendable {
  /// How many blocks may run at once.
  public let maxConcurrent: Int

  private let queue: LockedBox<PermitQueue>

  /// Creates a limiter.
  ///
  /// ```swift
  /// let limiter = LoadLimiter(maxConcurrent: 2)
  /// ```
  ///
  /// - Parameter maxConcurrent: How many blocks may run at once; at least 1 (less is a precondition failure).
  public init(maxConcurrent: Int) {
    precondition(maxConcurrent >= 1, "Processed: LoadLimiter(maxConcurrent:) needs at least 1, got \(maxConcurrent)")
    self.maxConcurrent = maxConcurrent
    queue = LockedBox(PermitQueue())
  }

  /// The blocks holding a permit now.
  ///
  /// ```swift
  /// print("\(limiter.running) of \(limiter.maxConcurrent) running, \(limiter.waiting) waiting")
  /// ```
  public var running: Int { queue.withLock { $0.running } }

  /// The loads queued for a permit.
  ///
  /// ```swift
  /// if limiter.waiting > 0 { print("\(limiter.waiting) loads are queued") }
  /// ```
  public var waiting: Int { queue.withLock { $0.waiting } }

  /// What ``onQueueChange`` calls.
  typealias QueueObserver = @Sendable () -> Void

  /// For tests: called after every change of ``running`` or ``waiting``, outside the lock, on the thread that made
  /// it — so that a test can wait for a load to queue (which nothing else reports: its activity is already
  /// `.waiting` when it is called) without polling. While it is unset, a change only reads `nil` under the lock it
  /// already holds.
  var onQueueChange: QueueObserver? {
    get { queue.withLock { $0.onChange } }
    set { queue.withLock { $0.onChange = newValue } }
  }

  /// Runs `body` holding a permit of this limiter, waiting for one first — the same permits, in the same FIFO queue,
  /// as the loads that share the limiter. Use it for work that is not a load but should count against the same cap.
  ///
  /// ```swift
  /// let uploads = LoadLimiter(maxConcurrent: 2)
  /// try await uploads.withPermit {
  ///   try await api.upload(file)
  /// }
  /// ```
  ///
  /// The permit is given back when `body` returns or throws.
  ///
  /// - Parameters:
  ///   - isolation: The caller's actor; the wait and `body` run there.
  ///   - body: The work to run while holding the permit.
  /// - Returns: What `body` returns.
  /// - Throws: `CancellationError` when the calling task is cancelled while it waits (it then leaves the queue at
  ///   once, and `body` never runs); otherwise what `body` throws.
  public func withPermit<Result>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> Result
  ) async throws -> Result {
    guard await acquire() else { throw CancellationError() }
    defer { release() }
    return try await body()
  }

  /// Waits for a permit, in FIFO order. Returns `false` — without a permit — when the calling task is cancelled
  /// while it waits (or was before it asked); the waiter then leaves the queue at once. Runs on the caller's actor
  /// (no executor hop when a permit is free).
  @usableFromInline
  func acquire(isolation: isolated (any Actor)? = #isolation) async -> Bool {
    let maxConcurrent = maxConcurrent
    let (waiter, changed): (PermitWaiter?, QueueObserver?) = queue.withLock { queue in
      if queue.running < maxConcurrent, queue.waiting == 0 {
        queue.running += 1
        return (nil, queue.onChange)
      }
      let waiter = PermitWaiter()
      queue.enqueue(waiter)
      return (waiter, queue.onChange)
    }
    changed?()
    guard let waiter else { return true }
    return await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let answer: Bool? = queue.withLock { _ in
          switch waiter.status {
          case .granted: return true
          case .cancelled: return false
          case .queued:
            waiter.continuation = continuation
            return nil
          }
        }
        if let answer { continuation.resume(returning: answer) }
      }
    } onCancel: {
      let (continuation, changed): (CheckedContinuation<Bool, Never>??, QueueObserver?) = queue.withLock { queue in
        guard waiter.status == .queued else { return (nil, nil) }
        queue.remove(waiter)
        return (.some(waiter.takeContinuation()), queue.onChange)
      }
      changed?()
      if case .some(let continuation?) = continuation { continuation.resume(returning: false) }
    }
  }

  /// Gives a permit back: the first waiter in the queue gets it, or the count of running blocks goes down.
  @usableFromInline
  func release() {
    let (next, changed): (CheckedContinuation<Bool, Never>??, QueueObserver?) = queue.withLock { queue in
      guard let waiter = queue.dequeue() else {
        precondition(queue.running > 0, "Processed: a LoadLimiter permit was given back twice")
        queue.running -= 1
        return (nil, queue.onChange)
      }
      // The permit passes from the releasing block to the waiter: `running` stays as it is.
      waiter.status = .granted
      return (.some(waiter.takeContinuation()), queue.onChange)
    }
    changed?()
    if case .some(let continuation?) = next { continuation.resume(returning: true) }
  }
}

/// One load waiting for a permit. Its fields are guarded by the limiter's lock.
private final class PermitWaiter: @unchecked Sendable {
  // `@unchecked`: every access happens inside `LoadLimiter.queue.withLock`.
  enum Status { case queued, granted, cancelled }
  var status = Status.queued
  /// Set when the waiting task suspends; `nil` before (the status then answers it) and after it was resumed.
  var continuation: CheckedContinuation<Bool, Never>?

  func takeContinuation() -> CheckedContinuation<Bool, Never>? {
    defer { continuation = nil }
    return continuation
  }
}

/// The permits in use and the FIFO queue of waiters. Cancelled waiters are marked and skipped (removed lazily), so
/// that leaving the queue is O(1); the queue is compacted when they make up most of it.
private struct PermitQueue {
  var running = 0
  /// See ``LoadLimiter/onQueueChange``.
  var onChange: LoadLimiter.QueueObserver?
  /// Queued waiters, not counting cancelled ones.
  private(set) var waiting = 0
  private var waiters: [PermitWaiter] = []
  private var head = 0

  mutating func enqueue(_ waiter: PermitWaiter) {
    waiters.append(waiter)
    waiting += 1
  }

  /// The first waiter still queued, taken out of the queue.
  mutating func dequeue() -> PermitWaiter? {
    while head < waiters.count {
      let waiter = waiters[head]
      head += 1
      if waiter.status == .queued {
        waiting -= 1
        compactIfNeeded()
        return waiter
      }
    }
    compactIfNeeded()
    return nil
  }

  /// Takes a queued waiter out of the queue (its task was cancelled).
  mutating func remove(_ waiter: PermitWaiter) {
    waiter.status = .cancelled
    waiting -= 1
    compactIfNeeded()
  }

  /// Drops the entries before `head` and the cancelled ones once they make up most of the array (and it is not tiny),
  /// so both leaving the queue and taking its head stay O(1) amortized.
  private mutating func compactIfNeeded() {
    let dead = head + (waiters.count - head - waiting)
    guard dead > 32, dead * 2 > waiters.count else { return }
    waiters = waiters[head...].filter { $0.status == .queued }
    head = 0
  }
}

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
/// once and never runs its block. A load takes its place in the queue (or its permit) when it is called, so
/// ``running`` and ``waiting`` count it from the call on, and permits go in the order of the calls; they return to 0
/// when all is done: no permit is leaked, no waiter skipped. (A debounced load queues once its debounce is over.)
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
  /// it — so that a test can wait for the counts to change (a permit passing on, a retry queueing again) without
  /// polling. While it is unset, a change only reads `nil` under the lock it already holds.
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
  /// while it waits (or, when no permit is free, before it asked); the waiter then leaves the queue at once. Runs on
  /// the caller's actor (no executor hop, no suspension, when a permit is free).
  @usableFromInline
  func acquire(isolation: isolated (any Actor)? = #isolation) async -> Bool {
    // A permit free and nobody waiting: taken at once, with no ticket to allocate.
    let maxConcurrent = maxConcurrent
    let (taken, changed): (Bool, QueueObserver?) = queue.withLock { queue in
      let taken = queue.takeFreePermit(maxConcurrent: maxConcurrent)
      return (taken, taken ? queue.onChange : nil)
    }
    changed?()
    if taken { return true }
    return await claim(reserve())
  }

  /// Takes a place in the queue now — or a permit, when one is free and nobody waits — for a task to ``claim(_:)``
  /// later, so that loads queue in the order of their calls; withdrawn by `LoadTracker.clear` when the load stops
  /// first.
  @usableFromInline
  func reserve() -> PermitTicket {
    let ticket = PermitTicket()
    let maxConcurrent = maxConcurrent
    let changed: QueueObserver? = queue.withLock { queue in
      if queue.takeFreePermit(maxConcurrent: maxConcurrent) {
        ticket.status = .granted
      } else {
        queue.enqueue(ticket)
      }
      return queue.onChange
    }
    changed?()
    return ticket
  }

  /// Waits until `ticket` holds a permit and takes it (`true`): it is then the caller's, to give back with
  /// ``release()``. `false`, without a permit, when the ticket was withdrawn or the calling task is cancelled (a
  /// queued ticket then leaves the queue at once, and a permit it held passes on).
  @usableFromInline
  func claim(_ ticket: PermitTicket, isolation: isolated (any Actor)? = #isolation) async -> Bool {
    // Under the lock: takes the permit once the ticket holds one (`true`), `false` once it never will, `nil` while it
    // is queued.
    func take() -> Bool? {
      queue.withLock { _ in
        switch ticket.status {
        case .granted:
          ticket.status = .claimed
          return true
        case .claimed, .withdrawn: return false
        case .queued: return nil
        }
      }
    }
    // Granted already (a permit was free when it was reserved, or one passed to it): taken without suspending.
    if let settled = take() { return settled }
    if Task.isCancelled {
      withdraw(ticket)
      return false
    }
    let granted = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let answer: Bool? = queue.withLock { _ in
          switch ticket.status {
          case .granted: return true
          case .claimed, .withdrawn: return false
          case .queued:
            ticket.continuation = continuation
            return nil
          }
        }
        if let answer { continuation.resume(returning: answer) }
      }
    } onCancel: {
      withdraw(ticket, onlyQueued: true)
    }
    // Taken under the lock: a withdrawal that came first (the load stopped meanwhile) gave the permit back already.
    return granted && take() == true
  }

  /// Gives `ticket` up: a queued ticket leaves the queue (its claimer, if suspended, gets `false`), and a permit it
  /// was given but nobody claimed passes to the next waiter. Does nothing once the permit was claimed (its holder
  /// gives it back) or the ticket was withdrawn. Any thread, any number of times.
  @usableFromInline
  func withdraw(_ ticket: PermitTicket, onlyQueued: Bool = false) {
    let (suspended, next, changed):
      (CheckedContinuation<Bool, Never>?, CheckedContinuation<Bool, Never>?, QueueObserver?) = queue.withLock { queue in
        switch ticket.status {
        case .claimed, .withdrawn:
          // A claimed permit is its holder's, who gives it back.
          return (nil, nil, nil)
        case .queued:
          queue.remove(ticket)
          return (ticket.takeContinuation(), nil, queue.onChange)
        case .granted:
          guard !onlyQueued else { return (nil, nil, nil) }
          ticket.status = .withdrawn
          return (ticket.takeContinuation(), Self.passPermit(&queue), queue.onChange)
        }
      }
    changed?()
    suspended?.resume(returning: false)
    next?.resume(returning: true)
  }

  /// Gives a permit back: the first waiter in the queue gets it, or the count of running blocks goes down.
  @usableFromInline
  func release() {
    let (next, changed) = queue.withLock { queue in (Self.passPermit(&queue), queue.onChange) }
    changed?()
    next?.resume(returning: true)
  }

  /// Under the lock: a permit given back goes to the first queued ticket (returned: the continuation to resume, if
  /// its claimer is suspended), or the count of running blocks goes down.
  private static func passPermit(_ queue: inout PermitQueue) -> CheckedContinuation<Bool, Never>? {
    guard let ticket = queue.dequeue() else {
      precondition(queue.running > 0, "Processed: a LoadLimiter permit was given back twice")
      queue.running -= 1
      return nil
    }
    // The permit passes from the releasing block to the waiter: `running` stays as it is.
    ticket.status = .granted
    return ticket.takeContinuation()
  }
}

/// A place in a limiter's queue, or a permit it was given: taken by ``LoadLimiter/reserve()``, taken up by
/// ``LoadLimiter/claim(_:isolation:)``, given up by ``LoadLimiter/withdraw(_:onlyQueued:)``. Its fields are guarded
/// by the limiter's lock.
@usableFromInline
final class PermitTicket: @unchecked Sendable {
  // `@unchecked`: every access to the fields below happens inside the limiter's `queue.withLock`. It does not hold
  // its limiter, whose queue holds it.
  /// `claimed`: the granted permit was taken by its claimer, who gives it back (a withdrawal leaves it alone).
  enum Status { case queued, granted, claimed, withdrawn }
  var status = Status.queued
  /// Set when the claiming task suspends; `nil` before (the status then answers it) and after it was resumed.
  var continuation: CheckedContinuation<Bool, Never>?

  init() {}

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
  private var waiters: [PermitTicket] = []
  private var head = 0

  /// Takes a permit when one is free and nobody waits (a waiter comes first); returns whether it did.
  mutating func takeFreePermit(maxConcurrent: Int) -> Bool {
    guard running < maxConcurrent, waiting == 0 else { return false }
    running += 1
    return true
  }

  mutating func enqueue(_ waiter: PermitTicket) {
    waiters.append(waiter)
    waiting += 1
  }

  /// The first waiter still queued, taken out of the queue.
  mutating func dequeue() -> PermitTicket? {
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
  mutating func remove(_ waiter: PermitTicket) {
    waiter.status = .withdrawn
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

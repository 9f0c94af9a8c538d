/// The fetches and mutations of one cache waiting for the network (see ``NetworkMode/online``), in the order they
/// began to wait.
///
/// When the network comes back they go on in that order, without waiting for each other: the first is resumed, and
/// each one resumed resumes the next as it goes on (so the order does not depend on how the runtime schedules
/// resumed tasks). If the network goes again meanwhile, the rest stay paused.
@MainActor
final class NetworkWaiters {
  /// Each waiter's signal: `true` it goes on, `false` cancelled or the cache closed. `head`: the next to resume.
  private var waiters: [FirstSignal<Bool>] = []
  private var head = 0
  /// Whether the network is up, as the cache last acted on it.
  private(set) var isOnline = true

  nonisolated init() {}

  /// Returns `true` when it is this waiter's turn once the network is back, `false` as soon as the calling task is
  /// cancelled or the cache is closed.
  func wait() async -> Bool {
    // Cancelled waiters stay in the queue until their turn; an offline spell with many of them is pruned.
    if head == 0, waiters.count >= 32 { waiters.removeAll { $0.sent != nil } }
    let signal = FirstSignal<Bool>()
    waiters.append(signal)
    let goesOn = await withTaskCancellationHandler {
      await signal.wait()
    } onCancel: {
      signal.signal(false)
    }
    if goesOn { resumeNext() }
    return goesOn
  }

  /// The network went (`false`) or came back (`true`: the first waiter goes on).
  func setOnline(_ online: Bool) {
    isOnline = online
    if online { resumeNext() }
  }

  /// The cache closed: every waiter ends with `false`.
  func close() {
    isOnline = false
    let ended = waiters
    waiters = []
    head = 0
    for index in ended.indices { ended[index].signal(false) }
  }

  /// Resumes the first waiter that was not cancelled, while online.
  private func resumeNext() {
    while isOnline, head < waiters.count {
      let signal = waiters[head]
      head += 1
      if signal.signal(true) { break }
    }
    if head == waiters.count {
      waiters.removeAll(keepingCapacity: true)
      head = 0
    }
  }
}

import Testing

@testable import Processed

/// The slot's lock on its own (on Linux a futex lock on one atomic word, see `CProcessedAtomics.h`): four threads
/// increment one plain counter under it, so most acquisitions meet a holder and take the contended path (sleep and
/// wake). A lock that let two holders in at once would lose increments (and the thread sanitizer would report the
/// counter); one that lost a wake-up would hang the test.
@Suite struct ObserverSlotLockTests {
  /// A counter touched only under the slot's lock.
  final class Counted: @unchecked Sendable {
    var value = 0
  }

  @Test func fourThreadsIncrementingUnderTheLockLoseNothing() async {
    // A slot is thread-safe but not `Sendable` (it is a `ManagedBuffer`).
    nonisolated(unsafe) let slot = ObserverSlot.make()
    let counted = Counted()
    let threads = 4
    let increments = 50_000
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<threads {
        group.addTask {
          for _ in 0..<increments {
            slot.lock()
            counted.value += 1
            slot.unlock()
          }
        }
      }
    }
    slot.lock()
    let total = counted.value
    slot.unlock()
    #expect(total == threads * increments)
  }
}

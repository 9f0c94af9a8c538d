import ProcessedTesting
import Testing

@testable import Processed

/// The callers of one `value(for:fetch:)` fetch: a caller counts as waiting from the moment it joins on the main actor
/// (an `invalidate` before its task parks restarts its fetch), and leaves exactly once.
@MainActor
@Suite struct CallerFetchTests {
  @Test func aCallerCountsAsWaitingFromItsJoinBeforeItParks() async throws {
    let callers = CallerFetch<Int>()
    #expect(!callers.hasWaiters)
    let id = callers.join()
    // Not parked yet: it waits all the same (this is what `invalidate` reads).
    #expect(callers.hasWaiters)
    let waiter = Task { try await callers.wait(id) {} }
    callers.finish(.success(5))
    #expect(try await waiter.value(timeLimit: .seconds(30)) == 5)
    #expect(!callers.hasWaiters)
  }

  @Test func aCallerCancelledBeforeItParksLeavesAndTellsTheEntryOnce() async {
    let callers = CallerFetch<Int>()
    let id = callers.join()
    let told = LockedBox(0)
    let waiter = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return try await callers.wait(id) { told.withLock { $0 += 1 } }
    }
    await #expect(throws: CancellationError.self) { try await waiter.value(timeLimit: .seconds(30)) }
    #expect(!callers.hasWaiters)
    #expect(told.withLock { $0 } == 1)
    // A later outcome reaches nobody, and the cancelled caller is not told again.
    callers.finish(.success(1))
    #expect(told.withLock { $0 } == 1)
  }

  @Test func aCallerThatJoinsAfterTheOutcomeGetsItAtOnce() async throws {
    let callers = CallerFetch<Int>()
    callers.finish(.success(3))
    let id = callers.join()
    #expect(try await callers.wait(id) {} == 3)
    #expect(!callers.hasWaiters)
  }
}

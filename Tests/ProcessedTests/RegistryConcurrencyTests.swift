import ProcessedTesting
import Testing

@testable import Processed

/// A model whose observed property can be read from any thread, so that code off the main actor can name its key
/// path and call `observe(\.value)` itself. Writes happen on the main actor.
final class AnyThreadCounterModel: ObservableModel, Sendable {
  let observers = ObserverRegistry()
  private let storage = LockedBox(0)

  var value: Int { storage.withLock { $0 } }

  @MainActor
  func set(_ newValue: Int) {
    storage.withLock { $0 = newValue }
    notifyObservers(\.value)
  }
}

@MainActor
private final class Ticker: ObservableModel {
  let observers = ObserverRegistry()
  @Observed var tick = 0
}

/// Counts handler calls on the main actor.
@MainActor
private final class Tally {
  var count = 0
}

/// Sets its flag when it is deallocated.
private final class Canary: Sendable {
  let released: LockedBox<Bool>

  init(_ released: LockedBox<Bool>) { self.released = released }

  deinit { released.withLock { $0 = true } }

  func touch() {}
}

/// One observer registered off the main actor, and the flag its owner sets once `cancel()` (or the release of the
/// token) has returned. The handler counts a violation when it starts after that.
private struct WatchedToken {
  var token: ObservationToken?
  let cancelReturned: LockedBox<Bool>
}

@MainActor
@Suite(.serialized) struct RegistryConcurrencyTests {
  /// After `cancel()` returns on another thread, the handler never starts again, however the cancellation falls
  /// between the main actor's back-to-back writes.
  ///
  /// Known defect this shows (in roughly half the runs, more under the thread sanitizer): `ObserverRegistry.notify`
  /// decides to call an entry and then calls it outside the lock, so a `cancel()` on another thread can return in
  /// between and the handler still starts afterwards.
  @Test func aCancelOnAnotherThreadIsFinalOnceItReturns() async {
    let model = Ticker()
    let calls = Tally()
    let violations = LockedBox(0)
    let rounds = 10_000
    for _ in 0..<rounds {
      let cancelReturned = LockedBox(false)
      let token = model.observe(\.tick) { _ in
        // First statement: a call that begins after `cancel()` returned is a violation.
        if cancelReturned.withLock({ $0 }) { violations.withLock { $0 += 1 } }
        calls.count += 1
      }
      let canceller = Task.detached {
        token.cancel()
        cancelReturned.withLock { $0 = true }
      }
      // Write back to back until the other thread reports that `cancel()` returned, then some more.
      await backToBack(while: { !cancelReturned.withLock { $0 } }, limit: 200_000) { _ in model.tick += 1 }
      for _ in 0..<20 { model.tick += 1 }
      await canceller.value
    }
    #expect(violations.withLock { $0 } == 0)
    #expect(model.observers.observerCount == 0)
    #expect(calls.count > 0)
  }

  /// The same through a wrapper's own slot with other observers around it, so that a notification walks the list
  /// of observers rather than calling a single one: after `cancel()` returns on another thread, the middle
  /// observer never starts again.
  @Test func aCancelOnAnotherThreadIsFinalOnceItReturnsAmongOtherObservers() async {
    let state = Loadable<Int>()
    let calls = Tally()
    let violations = LockedBox(0)
    let before = state.projectedValue.observe { _ in calls.count += 1 }
    let after = state.projectedValue.observe { _ in calls.count += 1 }
    for _ in 0..<2_000 {
      let cancelReturned = LockedBox(false)
      let token = state.projectedValue.observe { _ in
        if cancelReturned.withLock({ $0 }) { violations.withLock { $0 += 1 } }
      }
      let canceller = Task.detached {
        token.cancel()
        cancelReturned.withLock { $0 = true }
      }
      await backToBack(while: { !cancelReturned.withLock { $0 } }, limit: 200_000) {
        state.wrappedValue = .loaded($0)
      }
      for index in 0..<20 { state.wrappedValue = .loaded(index) }
      await canceller.value
    }
    #expect(violations.withLock { $0 } == 0)
    #expect(state.storage.ownObserverCount == 2)
    #expect(calls.count > 0)
    withExtendedLifetime((before, after)) {}
  }

  /// Eight tasks off the main actor register and cancel (or release) observers — through `observe(\.value)` on a
  /// model readable from any thread, and through the registry's slot of an `@Observed` property — while the main
  /// actor writes both properties. No handler starts after its cancellation returned, and nothing is left over.
  @Test func manyTasksObserveAndCancelOffTheMainActorWhileTheMainActorWrites() async {
    let counter = AnyThreadCounterModel()
    let ticker = Ticker()
    let tickRegistry = ticker.observers
    // A slot is thread-safe but not `Sendable` (it is a `ManagedBuffer`).
    nonisolated(unsafe) let tickSlot = tickRegistry.slot(for: \Ticker.tick, of: Int.self)
    let violations = LockedBox(0)
    let finishedTasks = LockedBox(0)
    let taskCount = 8
    let iterations = 500

    var tasks: [Task<Void, Never>] = []
    for taskIndex in 0..<taskCount {
      tasks.append(
        Task.detached {
          var live: [WatchedToken] = []
          for iteration in 0..<iterations {
            let cancelReturned = LockedBox(false)
            let handler: @MainActor (Int) -> Void = { _ in
              if cancelReturned.withLock({ $0 }) { violations.withLock { $0 += 1 } }
            }
            let token =
              taskIndex.isMultiple(of: 2)
              ? counter.observe(\.value, handler)
              : tickRegistry.addObserver(to: tickSlot, handler)
            live.append(WatchedToken(token: token, cancelReturned: cancelReturned))
            // Keep a few observers registered at once, so that writes meet them.
            if live.count > 4 {
              let cancelReturned = live[0].cancelReturned
              if iteration.isMultiple(of: 2) {
                live[0].token?.cancel()
              }
              // Drops the last reference to the token; its deinit cancels (again, for the even iterations).
              live.removeFirst()
              cancelReturned.withLock { $0 = true }
            }
          }
          while !live.isEmpty {
            let cancelReturned = live[0].cancelReturned
            live.removeFirst()
            cancelReturned.withLock { $0 = true }
          }
          finishedTasks.withLock { $0 += 1 }
        })
    }

    await backToBack(while: { finishedTasks.withLock { $0 } < taskCount }, limit: 500_000) { writes in
      counter.set(writes)
      ticker.tick = writes
    }
    for task in tasks { await task.value }

    #expect(finishedTasks.withLock { $0 } == taskCount)
    #expect(violations.withLock { $0 } == 0)
    #expect(counter.observers.observerCount == 0)
    #expect(ticker.observers.observerCount == 0)
  }

  @Test func anObserverRegisteredOffTheMainActorHearsLaterWrites() async {
    let model = AnyThreadCounterModel()
    let recorder = StateRecorder<Int>()
    let token = await Task.detached {
      model.observe(\.value) { recorder.record($0) }
    }.value
    #expect(model.observers.observerCount == 1)

    model.set(1)
    model.set(1)
    model.set(2)
    #expect(recorder.values == [1, 1, 2])
    await Task.detached { token.cancel() }.value
    model.set(3)
    #expect(recorder.values == [1, 1, 2])
    #expect(model.observers.observerCount == 0)
  }

  /// Tokens made on the main actor and released on other threads (their `deinit` cancels there) while the main
  /// actor writes.
  @Test func tokensReleasedOnOtherThreadsCancel() async {
    let model = Ticker()
    let violations = LockedBox(0)
    let batches = 4
    let perBatch = 100
    var boxes: [LockedBox<[WatchedToken]>] = []
    for _ in 0..<batches {
      var batch: [WatchedToken] = []
      for _ in 0..<perBatch {
        let cancelReturned = LockedBox(false)
        let token = model.observe(\.tick) { _ in
          if cancelReturned.withLock({ $0 }) { violations.withLock { $0 += 1 } }
        }
        batch.append(WatchedToken(token: token, cancelReturned: cancelReturned))
      }
      // The box holds the only references to this batch's tokens.
      boxes.append(LockedBox(batch))
    }
    #expect(model.observers.observerCount == batches * perBatch)

    var tasks: [Task<Void, Never>] = []
    for box in boxes {
      tasks.append(
        Task.detached {
          // Each popped token is released inside `withLock`, before its flag is set.
          while let cancelReturned = box.withLock({ $0.popLast()?.cancelReturned }) {
            cancelReturned.withLock { $0 = true }
          }
        })
    }
    await backToBack(while: { model.observers.observerCount > 0 }, limit: 100_000) { _ in model.tick += 1 }
    for task in tasks { await task.value }
    model.tick += 1
    #expect(violations.withLock { $0 } == 0)
    #expect(model.observers.observerCount == 0)
  }

  /// The last reference to a model goes away on one thread while other threads cancel and release its tokens.
  @Test func aModelDeallocatedOnAnotherThreadWhileItsTokensAreCancelled() async {
    for _ in 0..<200 {
      let handlerReleased = LockedBox(false)
      let holder = LockedBox<AnyThreadCounterModel?>(AnyThreadCounterModel())
      weak let weakModel = holder.withLock { $0 }
      var tokens: [ObservationToken] = []
      do {
        let canary = Canary(handlerReleased)
        let model = holder.withLock { $0 }!
        for _ in 0..<4 {
          tokens.append(model.observe(\.value) { _ in canary.touch() })
        }
        model.set(1)
      }
      let dropper = Task.detached {
        let model = holder.withLock { model in
          defer { model = nil }
          return model
        }
        _ = model?.value  // the last reference ends here, off the main actor
      }
      let canceller = Task.detached { [tokens] in
        tokens[0].cancel()
        tokens[1].cancel()
        tokens[0].cancel()
      }
      tokens.removeAll()  // the canceller now holds the last references
      await dropper.value
      await canceller.value
      #expect(weakModel == nil)
      #expect(handlerReleased.withLock { $0 } == true)
    }
  }
}

import ProcessedTesting
import Testing

@testable import Processed

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// Stress: thousands of loads issued back to back on every face, a thousand awaited loads started from concurrent
// tasks, detached tasks observing and cancelling on a model's registry while the main actor loads, and thousands
// of short-lived models with observers, `states` sequences, interrupts and running processes. Counts are scaled
// down under the thread and address sanitizers, which make every synchronisation several times slower.

/// Whether the thread or the address sanitizer's runtime is loaded.
let reliabilitySanitizerIsActive: Bool = {
  #if canImport(Darwin) || canImport(Glibc) || canImport(Musl)
    let process = dlopen(nil, RTLD_NOW)
    return dlsym(process, "__tsan_init") != nil || dlsym(process, "__asan_init") != nil
  #else
    return false
  #endif
}()

/// The model the concurrency stress test drives: a `@Loadable` state and a plain one driven by key path.
@MainActor
final class StressModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  @Loadable var wrapped: LoadableState<Int>
  var plain: LoadableState<Int> = .absent
}

/// A short-lived model for the lifetime stress test; counts its deinits.
@MainActor
final class LifetimeStressModel: ObservableModel, LoadableSupport {
  nonisolated static let deinits = KeyPathDeinitCounter()

  let observers = ObserverRegistry()
  @Loadable var wrapped: LoadableState<Int>
  var plain: LoadableState<Int> = .absent
  @Process var save
  var interrupts = 0

  deinit { Self.deinits.increment() }
}

/// A weak reference, to check after the fact that something was freed.
private struct WeakReference {
  weak var object: AnyObject?
}

/// One observer registered off the main actor, and the flag set once its cancellation (or release) returned.
private struct OffMainObserver {
  var token: ObservationToken?
  let cancelReturned: LockedBox<Bool>
}

@MainActor
@Suite(.serialized) struct StressTests {
  // MARK: Loads back to back

  /// 10 000 loads issued back to back on one state (2 000 under a sanitizer), cycling through returning, yielding,
  /// throwing and interrupted loads, with only the last one awaited: the history is exactly one `.loading` and the
  /// last value. None of the superseded loads ever writes — not when the last one ends, nor after every one of
  /// their tasks has ended.
  @Test(arguments: LoadFaceKind.allCases)
  func thousandsOfLoadsBackToBackWriteOnlyTheLast(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let count = reliabilitySanitizerIsActive ? 2_000 : 10_000
    var superseded: [Task<Void, Never>] = []
    superseded.reserveCapacity(count)
    for value in 0..<count - 1 {
      switch value % 4 {
      case 0:
        superseded.append(face.load { value })
      case 1:
        superseded.append(
          face.loadYielding { yield in
            yield(.loaded(value))
            yield(.error(WrapperError(code: value)))
          })
      case 2:
        superseded.append(face.load { () async throws -> Int in throw WrapperError(code: value) })
      default:
        superseded.append(face.loadInterrupted([.zero], { value }, { _ in throw TimeoutError() }))
      }
    }
    let last = face.load { count - 1 }
    #expect(history.values == [.loading])
    await last.value
    #expect(history.values == [.loading, .loaded(count - 1)])
    for task in superseded { await task.value }
    #expect(history.values == [.loading, .loaded(count - 1)])
    #expect(!face.isRunning())
    history.token?.cancel()
    #expect(face.observerCount() == 0)
  }

  /// 1 000 awaited loads (200 under a sanitizer) started from as many concurrent tasks, all blocked on one gate: each
  /// call returns once the gate opens, and only the load started last writes its value.
  @Test(arguments: LoadFaceKind.allCases)
  func awaitedLoadsFromConcurrentTasksLeaveOnlyTheLastStarted(_ kind: LoadFaceKind) async {
    let face = kind.make()
    let history = face.record()
    let count = reliabilitySanitizerIsActive ? 200 : 1_000
    let gate = Gate()
    let started = ReentrancyBox<[Int]>([])
    let returned = ReentrancyBox(0)
    let allStarted = WrapperLatch<Void>()
    var callers: [Task<Void, Never>] = []
    for value in 0..<count {
      // Each caller runs on the main actor: it records its start and starts its load with no suspension between.
      callers.append(
        Task {
          started.value.append(value)
          if started.value.count == count { allStarted.fulfil() }
          await face.loadAndWait {
            await gate.wait()
            return value
          }
          returned.value += 1
        })
    }
    await allStarted.value()
    #expect(history.values == [.loading])
    gate.open()
    for caller in callers { await caller.value }
    #expect(returned.value == count)
    #expect(history.values == [.loading, .loaded(started.value.last ?? -1)])
    #expect(!face.isRunning())
    history.token?.cancel()
  }

  // MARK: Observers from other threads while the main actor loads

  /// Eight detached tasks each register and cancel (or release) 1 000 observers (250 under a sanitizer) of a
  /// model's `@Loadable` state and of its key-path state, through `observe(_:)` off the main actor, while the main
  /// actor runs loads on both. No handler starts after its cancellation returned, the main-actor observers see
  /// every load exactly, and nothing is left: no observer, no running load, no key-path table entry.
  @Test func detachedTasksObserveAndCancelWhileTheMainActorLoads() async {
    let model = StressModel()
    let wrappedHistory = StateRecorder(model, \.wrapped)
    let plainHistory = StateRecorder(model, \.plain)
    // Formed on the main actor (the properties are main-actor isolated) and only used to register off it.
    nonisolated(unsafe) let wrappedPath: KeyPath<StressModel, LoadableState<Int>> = \StressModel.wrapped
    nonisolated(unsafe) let plainPath: KeyPath<StressModel, LoadableState<Int>> = \StressModel.plain
    let violations = LockedBox(0)
    let calls = LockedBox(0)
    let finishedTasks = LockedBox(0)
    let loadsDone = LockedBox(0)
    let taskCount = 8
    let iterations = reliabilitySanitizerIsActive ? 250 : 1_000

    var tasks: [Task<Void, Never>] = []
    for taskIndex in 0..<taskCount {
      tasks.append(
        Task.detached {
          var live: [OffMainObserver] = []
          for iteration in 0..<iterations {
            // Keep pace with the main actor's loads (one load per eight registrations), so that registrations,
            // cancellations and writes overlap for the whole run.
            while loadsDone.withLock({ $0 }) < iteration / 8 { await Task.yield() }
            let cancelReturned = LockedBox(false)
            let handler: @MainActor (LoadableState<Int>) -> Void = { _ in
              // First statement: a call that begins after the cancellation returned is a violation.
              if cancelReturned.withLock({ $0 }) { violations.withLock { $0 += 1 } }
              calls.withLock { $0 += 1 }
            }
            let path = (taskIndex + iteration).isMultiple(of: 2) ? wrappedPath : plainPath
            live.append(OffMainObserver(token: model.observe(path, handler), cancelReturned: cancelReturned))
            // Keep a few registered at once, so that the main actor's writes meet them.
            if live.count > 4 {
              var oldest = live.removeFirst()
              if iteration.isMultiple(of: 3) { oldest.token?.cancel() }
              oldest.token = nil  // the last reference: its deinit cancels (again, every third time)
              oldest.cancelReturned.withLock { $0 = true }
            }
          }
          while !live.isEmpty {
            var oldest = live.removeFirst()
            oldest.token = nil
            oldest.cancelReturned.withLock { $0 = true }
          }
          finishedTasks.withLock { $0 += 1 }
        })
    }

    var rounds = 0
    while finishedTasks.withLock({ $0 }) < taskCount || rounds < 50, rounds < 100_000 {
      let value = rounds
      if value.isMultiple(of: 2) {
        await model.$wrapped.load { value }
      } else {
        await model.load(\.plain) { value }
      }
      rounds += 1
      loadsDone.withLock { $0 = rounds }
    }
    for task in tasks { await task.value }

    print(
      "stress: \(rounds) main-actor loads, \(taskCount * iterations) observers registered and cancelled off it, "
        + "\(calls.withLock { $0 }) of their handlers called")
    #expect(finishedTasks.withLock { $0 } == taskCount)
    #expect(violations.withLock { $0 } == 0)
    let evenRounds = stride(from: 0, to: rounds, by: 2)
    let oddRounds = stride(from: 1, to: rounds, by: 2)
    #expect(wrappedHistory.values == evenRounds.flatMap { [LoadableState<Int>.loading, .loaded($0)] })
    #expect(plainHistory.values == oddRounds.flatMap { [LoadableState<Int>.loading, .loaded($0)] })
    #expect(model.observers.observerCount == 2)
    wrappedHistory.token?.cancel()
    plainHistory.token?.cancel()
    #expect(model.observers.observerCount == 0)
    #expect(model.$wrapped.storage.ownObserverCount == 0)
    #expect(!model.$wrapped.storage.tracker.isRunning)
    #expect(keyPathHostCount(of: model) == 0)
  }

  // MARK: Lifetime under load

  /// 2 000 short-lived models (300 under a sanitizer), each with a model observer, a wrapper observer, a dropped and
  /// a held `states` sequence, an awaited load with a zero and a never-ending interrupt whose handler captures the
  /// model, an awaited key-path load and a process left running: afterwards every model, registry, wrapper
  /// storage and token is freed, and no key-path table entry is left.
  @Test func manyShortLivedModelsWithObserversStreamsAndInterruptsLeaveNothingBehind() async {
    let count = reliabilitySanitizerIsActive ? 300 : 2_000
    let before = LifetimeStressModel.deinits.value
    var references: [WeakReference] = []
    var notifications = 0
    for index in 0..<count {
      let model = LifetimeStressModel()
      let modelToken = model.observe(\.wrapped) { _ in notifications += 1 }
      let wrapperToken = model.$wrapped.observe { _ in notifications += 1 }
      _ = model.$wrapped.states
      let heldStates = model.$save.states
      await model.$wrapped.load(interrupts: [.zero, .seconds(Int64.max)]) {
        await Task.yield()
        return index
      } onInterrupt: { _ in
        model.interrupts += 1
      }
      await model.load(\.plain) { index }
      let running: Task<Void, Never> = model.$save.run {
        await untilCancelled()
        try Task.checkCancellation()
      }
      references += [
        WeakReference(object: model), WeakReference(object: model.observers),
        WeakReference(object: model.$wrapped.storage), WeakReference(object: model.$save.storage),
        WeakReference(object: modelToken), WeakReference(object: wrapperToken),
      ]
      withExtendedLifetime((heldStates, running)) {}
    }
    #expect(notifications == 4 * count)
    // Interrupt tasks end once they see their cancellation; the running processes once their storage is freed.
    await until(.signal(LifetimeStressModel.deinits.changes)) { LifetimeStressModel.deinits.value - before == count }
    #expect(LifetimeStressModel.deinits.value - before == count)
    #expect(references.allSatisfy { $0.object == nil }, "something the library keeps retains a model's parts")
    #expect(keyPathHostCount(rootType: LifetimeStressModel.self) == 0)
  }
}

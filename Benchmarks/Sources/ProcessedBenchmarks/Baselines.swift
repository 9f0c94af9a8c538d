// What a user would write by hand, or pick instead: the baselines every figure is compared with.
import Observation
import OpenCombine
import Processed
import Synchronization

/// The floor for write + notify: a value, and observers in an array behind a `Mutex`, copied out and called after
/// unlocking.
@MainActor
final class HandRegistry {
  typealias Handler = @MainActor @Sendable (Int) -> Void
  private(set) var value = 0
  private let observers = Mutex<[(id: Int, handler: Handler)]>([])
  private var nextID = 0

  func add(_ handler: @escaping Handler) -> Int {
    nextID &+= 1
    let id = nextID
    observers.withLock { $0.append((id, handler)) }
    return id
  }

  func remove(_ id: Int) {
    observers.withLock { list in
      if let index = list.firstIndex(where: { $0.id == id }) { list.remove(at: index) }
    }
  }

  func set(_ newValue: Int) {
    value = newValue
    let snapshot = observers.withLock { $0 }
    for observer in snapshot { observer.handler(newValue) }
  }
}

/// The boilerplate Processed replaces: a state, a task, a generation counter and observers, on the main actor.
@MainActor
final class HandLoader {
  private(set) var state: LoadableState<Int> = .absent
  private var task: Task<Void, Never>?
  private var generation = 0
  let observers = HandRegistry()

  private func write(_ newState: LoadableState<Int>) {
    state = newState
    observers.set(0)
  }

  @discardableResult
  func load(_ block: @escaping @MainActor () async throws -> Int) -> Task<Void, Never> {
    task?.cancel()
    generation &+= 1
    let current = generation
    if !state.isLoading { write(.loading) }
    let task = Task {
      do {
        let value = try await block()
        guard current == self.generation, !Task.isCancelled else { return }
        self.write(.loaded(value))
      } catch {
        guard current == self.generation, !Task.isCancelled else { return }
        self.write(.error(error))
      }
      if current == self.generation { self.task = nil }
    }
    self.task = task
    return task
  }
}

/// OpenCombine's `@Published` with `sink` subscribers.
final class CombineModel {
  @OpenCombine.Published var value = 0
}

/// The Observation framework: one `withObservationTracking` registration per observer and change.
@Observable
final class ObservationModel {
  var value = 0
}

/// A counter the Observation baseline's `@Sendable` `onChange` closures can bump.
final class Counter: @unchecked Sendable {
  var count = 0
}

/// A model for Processed's `@Observed`, `@Loadable` and key-path forms.
@MainActor
final class ProcessedModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  @Observed var value = 0
  var numbers: LoadableState<Int> = .absent
}

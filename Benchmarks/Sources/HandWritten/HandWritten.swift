// The hand-written code Processed is compared with, shared by the benchmarks and ProfileScenario. `@inlinable`, so
// that it is specialized and inlined into the benchmarks exactly as Processed's own `@inlinable` code is.
import Processed
import Synchronization

/// The floor for write + notify: a value, and observers in an array behind a `Mutex`, copied out and called after
/// unlocking.
@MainActor
public final class HandRegistry {
  public typealias Handler = @MainActor @Sendable (Int) -> Void
  public var value = 0
  @usableFromInline let observers = Mutex<[(id: Int, handler: Handler)]>([])
  @usableFromInline var nextID = 0

  @inlinable
  public init() {}

  @inlinable
  public func add(_ handler: @escaping Handler) -> Int {
    nextID &+= 1
    let id = nextID
    observers.withLock { $0.append((id, handler)) }
    return id
  }

  @inlinable
  public func remove(_ id: Int) {
    observers.withLock { list in
      if let index = list.firstIndex(where: { $0.id == id }) { list.remove(at: index) }
    }
  }

  @inlinable
  public func set(_ newValue: Int) {
    value = newValue
    let snapshot = observers.withLock { $0 }
    for observer in snapshot { observer.handler(newValue) }
  }
}

/// The boilerplate Processed replaces: a state, a task, a generation counter and observers, on the main actor.
@MainActor
public final class HandLoader {
  public var state: LoadableState<Int> = .absent
  @usableFromInline var task: Task<Void, Never>?
  @usableFromInline var generation = 0
  public let observers = HandRegistry()

  @inlinable
  public init() {}

  @inlinable
  func write(_ newState: LoadableState<Int>) {
    state = newState
    observers.set(0)
  }

  @inlinable @discardableResult
  public func load(_ block: @escaping @MainActor () async throws -> Int) -> Task<Void, Never> {
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

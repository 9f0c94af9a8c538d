// The hand-written code Processed is compared with, shared by the benchmarks and ProfileScenario. `@inlinable`, so
// that it is specialized and inlined into the benchmarks exactly as Processed's own `@inlinable` code is.
import Processed
import Synchronization

/// The floor for write + notify: a value, and observers in an array behind a `Mutex`, copied out and called after
/// unlocking.
@MainActor
public final class HandRegistry {
  /// An observer: called with the new value after each `set(_:)`.
  public typealias Handler = @MainActor @Sendable (Int) -> Void
  /// The current value.
  public var value = 0
  @usableFromInline let observers = Mutex<[(id: Int, handler: Handler)]>([])
  @usableFromInline var nextID = 0

  /// An empty registry with the value 0.
  @inlinable
  public init() {}

  /// Adds an observer and returns its id, for `remove(_:)`.
  @inlinable
  public func add(_ handler: @escaping Handler) -> Int {
    nextID &+= 1
    let id = nextID
    observers.withLock { $0.append((id, handler)) }
    return id
  }

  /// Removes the observer with this id; does nothing if there is none.
  @inlinable
  public func remove(_ id: Int) {
    observers.withLock { list in
      if let index = list.firstIndex(where: { $0.id == id }) { list.remove(at: index) }
    }
  }

  /// Stores the value, then calls every observer with it, outside the lock.
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
  /// The loading state.
  public var state: LoadableState<Int> = .absent
  @usableFromInline var task: Task<Void, Never>?
  @usableFromInline var generation = 0
  /// Told (with 0) after every write of `state`.
  public let observers = HandRegistry()

  /// A loader in the `.absent` state.
  @inlinable
  public init() {}

  @inlinable
  func write(_ newState: LoadableState<Int>) {
    state = newState
    observers.set(0)
  }

  /// Cancels the running load, writes `.loading` unless it is already the state, and runs `block` in a new task;
  /// only the latest load writes its outcome.
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

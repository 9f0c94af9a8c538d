// The hand-written code Processed is compared with, shared by the benchmarks and ProfileScenario. `@inlinable`, so
// that it is specialized and inlined into the benchmarks exactly as Processed's own `@inlinable` code is.
import Processed
import Synchronization

/// The floor for write + notify: a `Mutex` holding a `LoadableState<Int>` and an array of `@Sendable` handlers of
/// it; a write stores the value and copies the handlers under the lock, and calls them after unlocking.
///
/// Nonisolated and `Sendable`, with the payload Processed's `@Loadable<Int>` delivers — the strongest plain
/// registry a user could write by hand, so that the ratios against it say what Processed's registry costs.
public final class HandStateRegistry: Sendable {
  /// An observer: called with the new value after each `set(_:)`.
  public typealias Handler = @Sendable (LoadableState<Int>) -> Void

  @usableFromInline
  struct Storage: Sendable {
    @usableFromInline var value: LoadableState<Int> = .absent
    @usableFromInline var handlers: [Handler] = []
    /// The id of each handler, for `remove(_:)`; parallel to `handlers`.
    @usableFromInline var ids: [Int] = []
    @usableFromInline var nextID = 0

    @inlinable
    init() {}
  }

  @usableFromInline let storage = Mutex(Storage())

  /// An empty registry holding `.absent`.
  @inlinable
  public init() {}

  /// The current value.
  @inlinable
  public var value: LoadableState<Int> { storage.withLock { $0.value } }

  /// Adds an observer and returns its id, for `remove(_:)`.
  @inlinable
  public func add(_ handler: @escaping Handler) -> Int {
    storage.withLock { storage in
      storage.nextID &+= 1
      storage.handlers.append(handler)
      storage.ids.append(storage.nextID)
      return storage.nextID
    }
  }

  /// Removes the observer with this id; does nothing if there is none. The handler is released after unlocking.
  @inlinable
  public func remove(_ id: Int) {
    let removed: Handler? = storage.withLock { storage in
      guard let index = storage.ids.firstIndex(of: id) else { return nil }
      storage.ids.remove(at: index)
      return storage.handlers.remove(at: index)
    }
    withExtendedLifetime(removed) {}
  }

  /// Stores the value and copies the handlers under the lock, then calls every handler with it, after unlocking.
  @inlinable
  public func set(_ newValue: LoadableState<Int>) {
    let handlers = storage.withLock { storage in
      storage.value = newValue
      return storage.handlers
    }
    for handler in handlers { handler(newValue) }
  }
}

/// A plain property whose `didSet` notifies a ``HandStateRegistry``: the hand-written floor for a key-path load
/// that yields states.
@MainActor
public final class HandDidSetModel {
  /// The observers of `state`.
  public let observers = HandStateRegistry()
  /// The state; every write notifies `observers`.
  public var state: LoadableState<Int> = .absent {
    didSet { observers.set(state) }
  }

  /// A model holding `.absent`.
  @inlinable
  public init() {}
}

/// A reference-typed sink the benchmarks' handlers add to (the same handler body on every side).
public final class Sink: @unchecked Sendable {
  // `@unchecked`: the benchmarks call every handler on one thread.
  /// The sum of the loaded values taken so far.
  public var total = 0

  /// A sink at zero.
  @inlinable
  public init() {}

  /// Adds the loaded value of `state`, if any.
  @inlinable
  public func take(_ state: LoadableState<Int>) {
    if case .loaded(let value) = state { total &+= value }
  }
}

/// The former write + notify floor: an `Int` and `@MainActor` handlers in an array behind a `Mutex`, copied out
/// and called after unlocking. Still the baseline of `HandLoader`'s observers.
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

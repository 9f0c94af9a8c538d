// Hand-written shared caches: the baselines of the cache benchmarks (`CacheBenchmarks.swift`). `@inlinable`, like the
// rest of this target, so that they are specialized and inlined into the benchmarks as Processed's code is.
import Processed

/// The key a careful engineer gives a hand-written cache: a name and an id, stored and hashed as they are (no
/// boxing, no allocation).
public struct HandCacheKey: Hashable, Sendable {
  /// What the key names (`"profile"`).
  public let name: String
  /// Which one (`42`).
  public let id: Int

  /// A key from its name and id.
  @inlinable
  public init(_ name: String, _ id: Int) {
    self.name = name
    self.id = id
  }
}

/// The usual boilerplate for a shared value: values in a main-actor dictionary, and a screen that looks its key up
/// and writes the state from a `Task` (``HandBoilerplateState/showCached(_:in:)``).
@MainActor
public final class HandBoilerplateCache {
  /// The values, by key.
  public var values: [HandCacheKey: Int] = [:]

  /// An empty cache.
  @inlinable
  public init() {}
}

/// A screen's state in the boilerplate: a `LoadableState<Int>` whose `didSet` notifies a ``HandStateRegistry`` (the
/// write + notify floor).
@MainActor
public final class HandBoilerplateState {
  /// The observers of `state`.
  public let observers = HandStateRegistry()
  /// The state; every write notifies `observers`.
  public var state: LoadableState<Int> = .absent {
    didSet { observers.set(state) }
  }

  /// A state holding `.absent`.
  @inlinable
  public init() {}

  /// The boilerplate's hit: a dictionary lookup, then a `Task` on the main actor that writes `.loaded(value)`.
  /// Returns that task, or `nil` when the key has no value (the caller would fetch).
  @inlinable
  public func showCached(_ key: HandCacheKey, in cache: HandBoilerplateCache) -> Task<Void, Never>? {
    guard let value = cache.values[key] else { return nil }
    return Task { @MainActor in self.state = .loaded(value) }
  }
}

/// The floor a careful engineer would write for a shared value: a main-actor dictionary of entries, each with its
/// value, when it was written, and the write closures of the states subscribed to it. A fresh hit subscribes the
/// state if it is not yet, writes it and notifies its observer synchronously: no task, no executor hop.
@MainActor
public final class HandSharedCache {
  /// One key's value and subscribers.
  @usableFromInline
  final class Entry {
    @usableFromInline var value: Int?
    @usableFromInline var writtenAt: ContinuousClock.Instant
    /// The subscribed states' write closures, by state.
    @usableFromInline var subscribers: [(state: ObjectIdentifier, write: @MainActor (Int) -> Void)] = []

    @inlinable
    init(writtenAt: ContinuousClock.Instant) {
      self.writtenAt = writtenAt
    }

    @inlinable
    func unsubscribe(_ state: HandSharedState) {
      let id = ObjectIdentifier(state)
      if let index = subscribers.firstIndex(where: { $0.state == id }) { subscribers.remove(at: index) }
    }
  }

  @usableFromInline var entries: [HandCacheKey: Entry] = [:]
  @usableFromInline let clock = ContinuousClock()
  /// How long a written value stays fresh.
  public let staleTime: Duration

  /// An empty cache whose values stay fresh for `staleTime`.
  @inlinable
  public init(staleTime: Duration) {
    self.staleTime = staleTime
  }

  /// Writes `value` for `key` (fresh from now) and to every subscribed state.
  @inlinable
  public func set(_ value: Int, for key: HandCacheKey) {
    let now = clock.now
    let entry: Entry
    if let existing = entries[key] {
      entry = existing
    } else {
      entry = Entry(writtenAt: now)
      entries[key] = entry
    }
    entry.value = value
    entry.writtenAt = now
    for subscriber in entry.subscribers { subscriber.write(value) }
  }

  /// A load of `key` into `state` that is a fresh hit: subscribes `state` to the entry if it is not yet (leaving its
  /// earlier entry), and writes `.loaded(value)` to it, which notifies its observers. Returns `false`, having done
  /// nothing, when the key has no fresh value (the caller would fetch).
  @inlinable
  public func load(_ state: HandSharedState, key: HandCacheKey) -> Bool {
    guard let entry = entries[key], let value = entry.value, clock.now < entry.writtenAt.advanced(by: staleTime)
    else { return false }
    if state.entry !== entry {
      state.entry?.unsubscribe(state)
      entry.subscribers.append((ObjectIdentifier(state), { [weak state] in state?.state = .loaded($0) }))
      state.entry = entry
    }
    state.state = .loaded(value)
    return true
  }
}

/// A state of the ``HandSharedCache`` floor: a `LoadableState<Int>` whose `didSet` notifies a ``HandStateRegistry``
/// (the write + notify floor), and the entry it is subscribed to.
@MainActor
public final class HandSharedState {
  /// The observers of `state`.
  public let observers = HandStateRegistry()
  /// The state; every write notifies `observers`.
  public var state: LoadableState<Int> = .absent {
    didSet { observers.set(state) }
  }
  @usableFromInline var entry: HandSharedCache.Entry?

  /// A state holding `.absent`, subscribed to nothing.
  @inlinable
  public init() {}
}

import Testing

@testable import Processed

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// An ordinary error for key-path tests.
enum KeyPathTestError: Error, Equatable {
  case boom
  case late
}

/// The view model most key-path tests drive: an ``ObservableModel`` with plain stored states (no `didSet`, no
/// wrapper), so every observer call it sees comes from a `LoadableSupport`/`ProcessSupport` call.
@MainActor
final class KeyPathVM: ObservableModel, LoadableSupport, ProcessSupport {
  enum Action: Equatable, Sendable {
    case save
    case delete
  }

  let observers = ObserverRegistry()
  var numbers: LoadableState<[Int]> = .absent
  var other: LoadableState<Int> = .absent
  var action: ProcessState<Action> = .idle
  var upload: SingleProcessState = .idle

  /// A state one level down, so that a key path to it can be made at run time (see `FastPathTests`).
  struct Nested {
    var numbers: LoadableState<[Int]> = .absent
  }
  var nested = Nested()

  // Members the methods below use without `self.`.
  var source: [Int] = [1, 2, 3]
  var cached: [Int] = [0]
  var saved: [Action] = []
  var uploads = 0
  var slowInterrupts: [Duration] = []

  func fetch() async throws -> [Int] { source }
  func fail() async throws -> [Int] { throw KeyPathTestError.boom }
  func persist(_ action: Action) async throws { saved.append(action) }
  func sendFile() async throws { uploads += 1 }
  func noteSlow(_ delay: Duration) { slowInterrupts.append(delay) }

  // The key-path forms written the way users write them: no `self.` inside the closures.

  func refresh() { load(\.numbers) { try await fetch() } }

  func refreshAndWait() async { await load(\.numbers) { try await fetch() } }

  func refreshFailing() { load(\.numbers) { try await fail() } }

  func stream() {
    load(\.numbers) { yield in
      yield(.loaded(cached))
      yield(.loaded(try await fetch()))
    }
  }

  func refreshWatchingDelays() async {
    await load(\.numbers, interrupts: [.zero]) {
      try await fetch()
    } onInterrupt: { delay in
      noteSlow(delay)
    }
  }

  func streamWatchingDelays() {
    load(\.numbers, interrupts: [.zero]) { yield in
      yield(.loaded(try await fetch()))
    } onInterrupt: { delay in
      noteSlow(delay)
    }
  }

  func save() { run(\.action, as: .save) { try await persist(.save) } }

  func deleteAndWait() async { await run(\.action, as: .delete) { try await persist(.delete) } }

  func startUpload() { run(\.upload) { try await sendFile() } }

  func uploadAndWait() async { await run(\.upload) { try await sendFile() } }

  func saveWatchingDelays() async {
    await run(\.action, as: .save, interrupts: [.zero]) {
      try await persist(.save)
    } onInterrupt: { delay in
      noteSlow(delay)
    }
  }

  func uploadWatchingDelays() {
    run(\.upload, interrupts: [.zero]) {
      try await sendFile()
    } onInterrupt: { delay in
      noteSlow(delay)
    }
  }

  func stopAll() {
    cancel(\.numbers)
    reset(\.other)
    cancel(\.action)
    reset(\.upload)
  }
}

/// A model whose states notify from their own `didSet` too: a key-path write must still reach each observer once.
@MainActor
final class KeyPathDidSetModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  private(set) var numbersLog: [LoadableState<[Int]>] = []
  private(set) var actionLog: [ProcessState<KeyPathVM.Action>] = []

  var numbers: LoadableState<[Int]> = .absent {
    didSet {
      numbersLog.append(numbers)
      notifyObservers(\.numbers)
    }
  }

  var action: ProcessState<KeyPathVM.Action> = .idle {
    didSet {
      actionLog.append(action)
      notifyObservers(\.action)
    }
  }
}

/// A model whose states are `@Observed`, which notify on every write by themselves.
@MainActor
final class KeyPathObservedModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  @Observed var numbers: LoadableState<[Int]> = .absent
  @Observed var action: ProcessState<KeyPathVM.Action> = .idle
}

/// A model whose states are `@Loadable`/`@Process` wrappers, driven here through key paths.
@MainActor
final class KeyPathWrappedModel: ObservableModel, LoadableSupport, ProcessSupport {
  let observers = ObserverRegistry()
  @Loadable var numbers: LoadableState<[Int]>
  @Process<KeyPathVM.Action> var action
}

/// A class that is not an ``ObservableModel``: the only way to see writes is the properties' `didSet`.
@MainActor
final class KeyPathPlainModel: LoadableSupport, ProcessSupport {
  private(set) var numbersLog: [LoadableState<[Int]>] = []
  private(set) var actionLog: [ProcessState<KeyPathVM.Action>] = []

  var numbers: LoadableState<[Int]> = .absent {
    didSet { numbersLog.append(numbers) }
  }

  var action: ProcessState<KeyPathVM.Action> = .idle {
    didSet { actionLog.append(action) }
  }
}

/// Counts deinitialisations from any thread.
final class KeyPathDeinitCounter: Sendable {
  private let box = LockedBox(0)
  /// Fired after each increment, for a test that waits for models to be freed.
  let changes = Signal()

  func increment() {
    box.withLock { $0 += 1 }
    changes.fire()
  }

  var value: Int { box.withLock { $0 } }
}

/// A short-lived view model for the lifetime stress test; counts its deinits.
@MainActor
final class KeyPathStressVM: LoadableSupport {
  nonisolated static let deinits = KeyPathDeinitCounter()

  var numbers: LoadableState<[Int]> = .absent

  deinit { Self.deinits.increment() }
}

/// The same as an ``ObservableModel``, so that every load also resolves and notifies through a registry.
@MainActor
final class KeyPathObservableStressVM: ObservableModel, LoadableSupport {
  nonisolated static let deinits = KeyPathDeinitCounter()

  let observers = ObserverRegistry()
  var numbers: LoadableState<[Int]> = .absent

  deinit { Self.deinits.increment() }
}

/// Whether the thread sanitizer's runtime is loaded (`swift test --sanitize=thread`), which makes every
/// synchronisation several times slower; stress tests scale down under it.
let keyPathThreadSanitizerIsActive: Bool = {
  #if canImport(Darwin) || canImport(Glibc) || canImport(Musl)
    return dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil
  #else
    return false
  #endif
}()

/// The number of running key-path loads of `model` (entries in the key-path host table for that instance).
///
/// Tests run in parallel, so tests count the entries of their own instances, never the whole table.
@MainActor
func keyPathHostCount(of model: AnyObject) -> Int {
  let instance = ObjectIdentifier(model)
  return RunningKeyPathHosts.runningKeys.filter { $0.instance == instance }.count
}

/// The number of running key-path loads on any instance of `Root`.
@MainActor
func keyPathHostCount(rootType: Any.Type) -> Int {
  RunningKeyPathHosts.runningKeys.filter { type(of: $0.keyPath).rootType == rootType }.count
}

/// Whether the key-path host table holds a running load for `keyPath` of `model`.
@MainActor
func keyPathHostIsRunning<Model: AnyObject, State: ManagedState & Sendable>(
  _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, State>
) -> Bool {
  engineTracksLoad(model, keyPath)
}

/// A main-actor box a test and the closures it starts can share.
@MainActor
final class KeyPathBox<Value> {
  var value: Value {
    didSet { changes.fire() }
  }
  /// Fired after every write of `value`, for waits woken by it (`Wake.changes(of: box)`).
  let changes = Signal()

  init(_ value: Value) { self.value = value }
}

/// A view-model base class that is not final, as apps often have: subclasses inherit its states and its loads.
@MainActor
class KeyPathBaseVM: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  var numbers: LoadableState<[Int]> = .absent

  /// Loads from inside the base class, where `Self` is `KeyPathBaseVM`; returns the load's task.
  @discardableResult
  func refresh(after gate: Gate, value: [Int] = [1]) -> Task<Void, Never> {
    load(\.numbers) {
      await gate.wait()
      return value
    }
  }
}

/// A subclass that adds nothing: `\KeyPathSubVM.numbers` names the same state as `\KeyPathBaseVM.numbers`.
@MainActor
final class KeyPathSubVM: KeyPathBaseVM {}

/// A task-local value that key-path loads started by the `async` forms must see.
enum KeyPathTaskLocal {
  @TaskLocal static var marker = 0
}

/// A plain class whose states have property observers and a computed setter, each logging its calls.
@MainActor
final class KeyPathAccessorModel: LoadableSupport {
  var log: [String] = []
  var storage: LoadableState<[Int]> = .absent

  var observed: LoadableState<[Int]> = .absent {
    willSet { log.append("willSet \(Self.describe(newValue))") }
    didSet { log.append("didSet \(Self.describe(oldValue))") }
  }

  var computed: LoadableState<[Int]> {
    get {
      log.append("get")
      return storage
    }
    set {
      log.append("set \(Self.describe(newValue))")
      storage = newValue
    }
  }

  static func describe(_ state: LoadableState<[Int]>) -> String {
    switch state {
    case .absent: "absent"
    case .loading: "loading"
    case .loaded(let value): "loaded(\(value))"
    case .error: "error"
    }
  }
}

import Testing

@testable import Processed

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

// The pieces of the model-based test (`ModelBasedTests.swift`): a seeded generator, the states, the scripted loads
// and the observer records. The subjects are in `ModelBasedSubjects.swift`, the runner and the reference model in
// `ModelBasedRunner.swift`.

// MARK: - Randomness

/// SplitMix64: a tiny seedable generator whose output depends only on its seed (never on the standard library's
/// algorithms), so a failing run replays exactly from the seed it prints.
struct MBRandom {
  private var state: UInt64

  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }

  /// A number in `0..<bound`.
  mutating func below(_ bound: Int) -> Int {
    precondition(bound > 0)
    return Int(next() % UInt64(bound))
  }

  /// `true` with a probability of `percent` in 100.
  mutating func percent(_ percent: Int) -> Bool { below(100) < percent }

  mutating func pick<Element>(_ elements: [Element]) -> Element { elements[below(elements.count)] }
}

/// The model-based test's seeded generator (SplitMix64), so that jittered delays are reproducible in a test.
extension MBRandom: RandomNumberGenerator {}

// MARK: - Configuration

/// What a run of the model-based test does: the seeds, and the operations per seed.
///
/// - `PROCESSED_SEED=<n>` runs only that seed, against every subject (a failure prints its seed).
/// - `PROCESSED_MODEL_OPS=<n>` sets the operations per run (default 500; lower it for slow sanitizer runs).
/// - `PROCESSED_MODEL_SOAK=<n>` runs seeds 1…n against every subject (a longer search; not for CI).
/// - `PROCESSED_MODEL_TRACE=1` prints every operation as it runs.
struct MBConfiguration {
  /// The fixed seeds of a CI run: each runs `operations` operations against one subject (round robin), so every
  /// subject gets two seeds and a default run makes 24 × 500 = 12,000 operations.
  static let defaultSeeds: [UInt64] = [
    0x5EED_0001, 0x5EED_0002, 0x5EED_0003, 0x5EED_0004, 0x5EED_0005, 0x5EED_0006,
    0x5EED_0007, 0x5EED_0008, 0x5EED_0009, 0x5EED_000A, 0x5EED_000B, 0x5EED_000C,
    0xC0FF_EE01, 0xC0FF_EE02, 0xC0FF_EE03, 0xC0FF_EE04, 0xC0FF_EE05, 0xC0FF_EE06,
    0xC0FF_EE07, 0xC0FF_EE08, 0xC0FF_EE09, 0xC0FF_EE0A, 0xC0FF_EE0B, 0xC0FF_EE0C,
  ]
  static let defaultOperations = 500

  /// The seed given in the environment, if any.
  var chosenSeed: UInt64?
  /// `PROCESSED_MODEL_SOAK=<n>`: run seeds 1…n against every subject instead (a longer search for failures).
  var soakSeeds: Int?
  var operations: Int
  var tracing: Bool

  static func fromEnvironment() -> MBConfiguration {
    let seed = environment("PROCESSED_SEED").flatMap(parseSeed)
    let operations = environment("PROCESSED_MODEL_OPS").flatMap { Int($0) }.map { max(1, $0) }
    return MBConfiguration(
      chosenSeed: seed,
      soakSeeds: environment("PROCESSED_MODEL_SOAK").flatMap { Int($0) }.map { max(1, $0) },
      operations: operations ?? defaultOperations,
      tracing: environment("PROCESSED_MODEL_TRACE").map { $0 != "0" && !$0.isEmpty } ?? false
    )
  }

  /// Whether the run is the default one (no seed, no operation count given), which must make 10,000 operations.
  var isDefault: Bool { chosenSeed == nil && soakSeeds == nil && operations == Self.defaultOperations }

  private static func environment(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    return String(cString: value)
  }

  /// Parses a decimal seed or a hexadecimal one (`0x…`).
  private static func parseSeed(_ text: String) -> UInt64? {
    if text.hasPrefix("0x") || text.hasPrefix("0X") { return UInt64(text.dropFirst(2), radix: 16) }
    return UInt64(text)
  }
}

// MARK: - States

/// The process kinds of the process subjects.
enum MBKind: Int, CaseIterable, Equatable, Sendable, CustomStringConvertible {
  case alpha, beta, gamma

  var description: String { ".\(self == .alpha ? "alpha" : self == .beta ? "beta" : "gamma")" }
}

/// The ordinary error scripted blocks throw; `Equatable`, so that histories compare `.error(…)` exactly.
struct MBError: Error, Equatable, Sendable, CustomStringConvertible {
  let code: Int

  var description: String { "MBError(\(code))" }
}

/// What the reference model needs to know about a state type: the state each rule writes.
protocol MBState: Equatable, Sendable {
  /// `.loading` / `.running(kind)`.
  static func mbStarted(_ kind: MBKind) -> Self
  /// `.loaded(value)` / `.finished(kind)`.
  static func mbCompleted(_ value: Int, _ kind: MBKind) -> Self
  /// `.error(error)` / `.failed(process: kind, error: error)`.
  static func mbFailed(_ error: any Error, _ kind: MBKind) -> Self
  /// `.absent` / `.idle`.
  static var mbReset: Self { get }
  /// Whether `refresh` applies (a loadable state) and this state holds a value for it to keep.
  var mbKeepsOnRefresh: Bool { get }
  /// Whether the state type has `refresh`.
  static var mbRefreshes: Bool { get }
  /// A random state for manual writes and yields (few distinct values, so that equal states recur).
  static func mbRandom(_ random: inout MBRandom) -> Self
}

extension LoadableState: MBState where Value == Int {
  static func mbStarted(_ kind: MBKind) -> Self { .loading }
  var mbKeepsOnRefresh: Bool { isLoaded }
  static var mbRefreshes: Bool { true }
  static func mbCompleted(_ value: Int, _ kind: MBKind) -> Self { .loaded(value) }
  static func mbFailed(_ error: any Error, _ kind: MBKind) -> Self { .error(error) }
  static var mbReset: Self { .absent }

  static func mbRandom(_ random: inout MBRandom) -> Self {
    switch random.below(8) {
    case 0: .absent
    case 1: .loading
    case 2: .error(MBError(code: random.below(2)))
    default: .loaded(random.below(4))
    }
  }
}

extension ProcessState: MBState where ProcessKind == MBKind {
  static func mbStarted(_ kind: MBKind) -> Self { .running(kind) }
  var mbKeepsOnRefresh: Bool { false }
  static var mbRefreshes: Bool { false }
  static func mbCompleted(_ value: Int, _ kind: MBKind) -> Self { .finished(kind) }
  static func mbFailed(_ error: any Error, _ kind: MBKind) -> Self { .failed(process: kind, error: error) }
  static var mbReset: Self { .idle }

  static func mbRandom(_ random: inout MBRandom) -> Self {
    let kind = random.pick(MBKind.allCases)
    switch random.below(7) {
    case 0: return .idle
    case 1, 2: return .running(kind)
    case 3: return .failed(process: kind, error: MBError(code: random.below(2)))
    default: return .finished(kind)
    }
  }
}

// MARK: - Scripted loads

/// How a scripted block ends once its last gate opens.
enum MBTerminal: CustomStringConvertible {
  /// A returning block returns this value (a process returns).
  case value(Int)
  /// A yielding block returns.
  case finish
  /// Throws `MBError(code)`.
  case failure(Int)
  /// Throws `CancelLoadable` (`true`) or `CancelProcess` (`false`).
  case cancelControl(loadFlavoured: Bool)
  /// Throws `ResetLoadable` (`true`) or `ResetProcess` (`false`).
  case resetControl(loadFlavoured: Bool)
  /// Throws `CancellationError` (without being cancelled).
  case cancellationError

  /// Returns the value or throws the error.
  func perform() throws -> Int {
    switch self {
    case .value(let value): return value
    case .finish: return 0
    case .failure(let code): throw MBError(code: code)
    case .cancelControl(let loadFlavoured):
      if loadFlavoured { throw CancelLoadable() } else { throw CancelProcess() }
    case .resetControl(let loadFlavoured):
      if loadFlavoured { throw ResetLoadable() } else { throw ResetProcess() }
    case .cancellationError: throw CancellationError()
    }
  }

  var description: String {
    switch self {
    case .value(let value): "return \(value)"
    case .finish: "return"
    case .failure(let code): "throw MBError(\(code))"
    case .cancelControl(let loadFlavoured): loadFlavoured ? "throw CancelLoadable" : "throw CancelProcess"
    case .resetControl(let loadFlavoured): loadFlavoured ? "throw ResetLoadable" : "throw ResetProcess"
    case .cancellationError: "throw CancellationError"
    }
  }
}

/// What `onInterrupt` does.
enum MBInterruptAction: CustomStringConvertible {
  case ignore
  case timeout
  case failure(Int)
  case cancelControl(loadFlavoured: Bool)
  case resetControl(loadFlavoured: Bool)

  func perform() throws {
    switch self {
    case .ignore: return
    case .timeout: throw TimeoutError()
    case .failure(let code): throw MBError(code: code)
    case .cancelControl(let loadFlavoured):
      if loadFlavoured { throw CancelLoadable() } else { throw CancelProcess() }
    case .resetControl(let loadFlavoured):
      if loadFlavoured { throw ResetLoadable() } else { throw ResetProcess() }
    }
  }

  var description: String {
    switch self {
    case .ignore: "ignore"
    case .timeout: "throw TimeoutError"
    case .failure(let code): "throw MBError(\(code))"
    case .cancelControl(let loadFlavoured): loadFlavoured ? "throw CancelLoadable" : "throw CancelProcess"
    case .resetControl(let loadFlavoured): loadFlavoured ? "throw ResetLoadable" : "throw ResetProcess"
    }
  }
}

/// The interrupts of a load: delays that are all zero or negative, so they fire at once and deterministically.
struct MBInterrupt {
  let delays: [Duration]
  let action: MBInterruptAction

  /// How many times `onInterrupt` is called: every delay when it ignores them, else once (its error ends the load).
  var expectedCalls: Int {
    if case .ignore = action { return delays.count }
    return 1
  }
}

/// One scripted load and what the test knows of its progress.
///
/// A gated load's block waits on one ``Gate`` per stage (ignoring cancellation, like non-cooperative network code);
/// after each stage it yields that stage's states, and after the last one it does its ``MBTerminal``. A cooperative
/// load instead sleeps until it is cancelled.
@MainActor
final class MBLoad<State: MBState> {
  let index: Int
  let kind: MBKind
  let isYielding: Bool
  let isAsync: Bool
  /// Sleeps (cancellably) instead of waiting on gates; never released, ends when cancelled.
  let isCooperative: Bool
  /// Never released by an operation, only at the end.
  let neverReleased: Bool
  /// The states yielded after each stage's gate opens.
  let yields: [[State]]
  let terminal: MBTerminal
  let interrupt: MBInterrupt?
  /// Started with `refresh` (see ``MBRequest/refresh``).
  var isRefresh = false
  /// A refresh that started from a loaded state: an ordinary failure is not written.
  var keepsContent = false
  let gates: [Gate]

  /// The gates the test opened.
  private(set) var opened = 0
  /// The stages the block completed (all but the last one; the last ends the task).
  var passed = 0 {
    didSet { progress.fire() }
  }
  var entered = false {
    didSet { progress.fire() }
  }
  private(set) var finished = false {
    didSet { progress.fire() }
  }
  var interruptCalls = 0 {
    didSet { progress.fire() }
  }
  var interruptDone = false {
    didSet { progress.fire() }
  }
  /// Fired after every change of the fields above, which the runner waits for.
  let progress: Signal
  /// An `accumulatedDelay` other than zero, if one was passed to `onInterrupt`.
  var unexpectedDelay: Duration?
  private(set) var task: Task<Void, Never>?
  private var watcher: Task<Void, Never>?

  init(
    index: Int, kind: MBKind, isYielding: Bool, isAsync: Bool, isCooperative: Bool, neverReleased: Bool,
    yields: [[State]], terminal: MBTerminal, interrupt: MBInterrupt?, progress: Signal
  ) {
    self.progress = progress
    self.index = index
    self.kind = kind
    self.isYielding = isYielding
    self.isAsync = isAsync
    self.isCooperative = isCooperative
    self.neverReleased = neverReleased
    self.yields = yields
    self.terminal = terminal
    self.interrupt = interrupt
    gates = yields.map { _ in Gate() }
  }

  var stageCount: Int { yields.count }

  /// Whether an operation may still open one of its gates.
  var isReleasable: Bool { !isCooperative && !neverReleased && opened < stageCount }

  /// Keeps the load's task and notes when it ends.
  func attach(_ task: Task<Void, Never>) {
    self.task = task
    watcher = Task { [weak self] in
      await task.value
      self?.finished = true
    }
  }

  /// Opens the next gate.
  func openNext() {
    guard opened < stageCount else { return }
    gates[opened].open()
    opened += 1
  }

  /// Waits for the gate of `stage`, or (cooperative) sleeps until cancelled.
  func waitForStage(_ stage: Int) async throws {
    if isCooperative {
      await untilCancelled()
      try Task.checkCancellation()
    } else {
      await gates[stage].wait()
    }
  }

  /// The `onInterrupt` handler.
  func interrupted(after accumulatedDelay: Duration) throws {
    interruptCalls += 1
    if accumulatedDelay != .zero { unexpectedDelay = accumulatedDelay }
    guard let interrupt else { return }
    if case .ignore = interrupt.action {
      if interruptCalls == interrupt.delays.count { interruptDone = true }
      return
    }
    interruptDone = true
    try interrupt.action.perform()
  }

  var description: String {
    var parts = ["L\(index)", isAsync ? "async" : "task", isYielding ? "yielding" : "returning", "kind \(kind)"]
    if isCooperative { parts.append("cooperative (sleeps until cancelled)") }
    if neverReleased { parts.append("never released") }
    if isYielding { parts.append("stages \(yields.map { $0.map { "\($0)" } })") }
    parts.append("then \(terminal)")
    if let interrupt { parts.append("interrupts \(interrupt.delays) → \(interrupt.action)") }
    return parts.joined(separator: " ")
  }
}

/// Everything a subject needs to start one scripted load.
struct MBRequest<State: MBState>: Sendable {
  let kind: MBKind
  let silently: Bool
  /// A `refresh` (returning blocks of loadable states only): from a loaded state it writes no start state and keeps
  /// the value on an ordinary failure.
  var refresh = false
  let isAsync: Bool
  /// `nil`: a form without interrupts.
  let interrupts: [Duration]?
  let onInterrupt: @MainActor @Sendable (Duration) throws -> Void
  /// The block of a returning load (a process ignores the value).
  let returning: @MainActor @Sendable () async throws -> Int
  /// The block of a yielding load; `nil` for a returning one.
  let yielding: (@MainActor @Sendable ((State) -> Void) async throws -> Void)?
}

// MARK: - Observers

/// Which registry an observer is in: the wrapper's own (`$value.observe`, `$value.states`) or the model's
/// (`model.observe(\.value)`).
enum MBPath: String, Sendable, CustomStringConvertible {
  case own
  case model

  var description: String { rawValue }
}

/// What an observer does when it is called (besides recording the value).
enum MBBehaviour: Equatable {
  case plain
  /// Cancels its own token on its `n`th call.
  case cancelSelf(after: Int)
  /// Registers a new plain observer on `path` on its first call (which must not see that change).
  case spawn(MBPath)
  /// Cancels `target` on its first call (which must then not see that change, nor any later).
  case cancelOther
  /// Calls the subject's `cancel()` on its first call: the running load ends and never writes again.
  case cancelLoad
  /// A `states` sequence, consumed by a task.
  case stream
}

/// One observer: what it received (the real side) and what the reference model expects it to receive.
@MainActor
final class MBRecord<State: MBState> {
  let seq: Int
  let path: MBPath
  let behaviour: MBBehaviour
  var token: ObservationToken?
  /// The observer `cancelOther` cancels.
  var target: MBRecord?
  /// The observer `spawn` registered (or, if the real one never did, the one the model expected).
  var child: MBRecord?
  var streamTask: Task<Void, Never>?

  var received: [State] = []
  var expected: [State] = []
  /// Whether the model considers it registered.
  var modelLive = false

  init(seq: Int, path: MBPath, behaviour: MBBehaviour) {
    self.seq = seq
    self.path = path
    self.behaviour = behaviour
  }

  var name: String { "O\(seq)" }
}

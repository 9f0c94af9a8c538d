/// The process kind for a state that runs one kind of process: each `SingleProcess()` is a distinct run.
///
/// A ``ProcessState`` is generic over the kind of process it runs, so one state can tell "saving" from "deleting".
/// When there is only one thing to run, ``SingleProcessState`` (`ProcessState<SingleProcess>`) uses this type, and
/// every run gets a fresh identity, so a finished run is never mistaken for a later one.
///
/// ```swift
/// let first = SingleProcess()
/// let second = SingleProcess()
/// first == second                                    // false: two distinct processes
/// SingleProcess(id: "save") == SingleProcess(id: "save")  // true: same chosen identity
/// ```
///
/// Generated identities and chosen ones live apart: a `SingleProcess()` never equals a `SingleProcess(id:)`, whatever
/// id was chosen.
public struct SingleProcess: Hashable, Sendable {
  /// Where a process's identity came from; the two namespaces never overlap.
  private enum Identity: Hashable, Sendable {
    /// Made by `init()` from the process-wide counter.
    case generated(UInt64)
    /// Chosen by the caller with `init(id:)`.
    case named(String)
  }

  /// The process-wide source of generated identities.
  ///
  /// A wrapping counter under a lock, as swift-async-algorithms does for its ids: cheap, thread-safe, and unique
  /// until 2⁶⁴ processes have been made.
  private static let counter = LockedBox<UInt64>(0)

  private let identity: Identity

  /// Creates a new process, distinct from every other process.
  ///
  /// Safe to call from any thread; its ``id`` is `#` followed by a number, e.g. `"#42"`.
  ///
  /// ```swift
  /// var save: SingleProcessState = .idle
  /// save.start(SingleProcess())  // the same as save.start()
  /// ```
  public init() {
    let number = Self.counter.withLock { next in
      next &+= 1
      return next
    }
    identity = .generated(number)
  }

  /// Creates a process with a chosen identity, equal to every other process made with the same id.
  ///
  /// A process made this way never equals one made by ``init()``, even if `id` looks like a generated id such as
  /// `"#42"`.
  ///
  /// ```swift
  /// SingleProcess(id: "1") == SingleProcess(id: "1")  // true
  /// SingleProcess(id: "1") == SingleProcess(id: "2")  // false
  /// ```
  ///
  /// - Parameter id: The identity of the process.
  public init(id: String) {
    identity = .named(id)
  }

  /// The identity of the process, for display and logging.
  ///
  /// For a process made with ``init(id:)`` this is the chosen id. For one made with ``init()`` it is `#` followed by
  /// a number (`"#42"`). Because the two namespaces are kept apart, two processes with the same `id` string are not
  /// necessarily equal: `SingleProcess(id: "#42")` differs from the generated process `#42`. Compare processes, not
  /// their ids.
  public var id: String {
    switch identity {
    case .generated(let number): "#\(number)"
    case .named(let name): name
    }
  }
}

// MARK: - Conformances

extension SingleProcess: CustomDebugStringConvertible {
  /// A readable description of the process: `SingleProcess(#42)` for a generated one, `SingleProcess(id: "save")` for
  /// one with a chosen id.
  public var debugDescription: String {
    switch identity {
    case .generated(let number): "SingleProcess(#\(number))"
    case .named(let name): "SingleProcess(id: \(String(reflecting: name)))"
    }
  }
}

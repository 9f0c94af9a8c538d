import Processed
import Testing

@testable import Processed

/// Latest wins for an actor-owned state called from many actors and a task group at once: "latest" is the order in
/// which the owner ran the calls. Seeded: the operations and each block's interleaving come from the seed.
@Suite struct IsolatedLatestWinsTests {
  /// One operation of a run.
  enum Operation: Sendable {
    case load(Int, turns: Int)
    case loadTask(Int, turns: Int)
    case cancel
    case reset
  }

  /// What the owner ran last, as the owner saw it.
  enum LastCall: Equatable {
    case none
    case load(Int)
    case stop(LoadableState<Int>)
  }

  /// The owner, recording the order in which it ran calls, and checking every write against it as it happens.
  actor Owner {
    let executor = QueueExecutor("latest-wins")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    @IsolatedLoadable var value: LoadableState<Int> = .absent
    var last = LastCall.none
    var violations: [String] = []
    var writes = 0
    var tasks: [Task<Void, Never>] = []

    /// The observer captures the actor: its token is the caller's to keep, not the actor's (no cycle).
    func watch() -> ObservationToken {
      $value.observe { state in
        self.writes += 1
        if !self.executor.isCurrent { self.violations.append("observer off the executor") }
        switch (state, self.last) {
        case (.loading, .load), (.absent, .stop(.absent)):
          break
        case (.loaded(let written), .load(let latest)) where written == latest:
          break
        default:
          self.violations.append("wrote \(state) after \(self.last)")
        }
      }
    }

    func perform(_ operation: Operation) async {
      switch operation {
      case .load(let value, let turns):
        last = .load(value)
        await $value.load { try await self.block(value, turns: turns) }
      case .loadTask(let value, let turns):
        last = .load(value)
        tasks.append($value.load { try await self.block(value, turns: turns) })
      case .cancel:
        // Set before the call: a reset writes while the call runs, and the observer checks that write.
        last = .stop(value)
        $value.cancel()
      case .reset:
        last = .stop(.absent)
        $value.reset()
      }
    }

    private func block(_ value: Int, turns: Int) async throws -> Int {
      if !executor.isCurrent { violations.append("block off the executor") }
      // Gives other callers a chance to run between the call and its result (the interleaving comes from the seed).
      for _ in 0..<turns { await Task.yield() }
      if !executor.isCurrent { violations.append("block off the executor after a suspension") }
      return value
    }

    func settle() async {
      for task in tasks { await task.value }
      tasks = []
    }

    /// The state the last call leaves once every load has ended.
    var expected: LoadableState<Int>? {
      switch last {
      case .none: nil
      case .load(let value): .loaded(value)
      case .stop(let state): state
      }
    }
  }

  /// Another actor that calls the owner.
  actor Caller {
    func call(_ owner: Owner, _ operation: Operation) async { await owner.perform(operation) }
  }

  @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6])
  func theOrderTheOwnerRanTheCallsDecides(seed: UInt64) async {
    var random = MBRandom(seed: seed)
    let owner = Owner()
    let watching = await owner.watch()
    defer { withExtendedLifetime(watching) {} }
    let callers = [Caller(), Caller(), Caller()]
    var operations: [(caller: Int?, operation: Operation)] = []
    for index in 0..<300 {
      let operation: Operation =
        switch random.below(10) {
        case 0: .cancel
        case 1: .reset
        case 2, 3, 4: .loadTask(index, turns: random.below(4))
        default: .load(index, turns: random.below(4))
        }
      operations.append((random.percent(50) ? random.below(callers.count) : nil, operation))
    }
    await withTaskGroup(of: Void.self) { group in
      for (caller, operation) in operations {
        if let caller {
          let caller = callers[caller]
          group.addTask { await caller.call(owner, operation) }
        } else {
          group.addTask { await owner.perform(operation) }
        }
      }
    }
    await owner.settle()
    let (violations, writes, state, expected) = await owner.run { ($0.violations, $0.writes, $0.value, $0.expected) }
    #expect(violations == [], "seed \(seed)")
    #expect(writes > 0)
    #expect(state == expected, "seed \(seed)")
  }
}

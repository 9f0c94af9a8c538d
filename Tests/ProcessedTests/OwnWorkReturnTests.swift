import ProcessedTesting
import Testing

@testable import Processed

/// Every `async` call returns when its own work ends, whatever other callers do (issue #38: "No caller waits for
/// another caller's work"). Two callers, A and B, each with work of its own parked at a gate, are finished in both
/// orders; the one finished first must return while the other's work is still parked.
@MainActor
@Suite struct OwnWorkReturnTests {
  /// Which of the two callers finishes first.
  enum Order: String, CaseIterable, CustomTestStringConvertible {
    case aFirst, bFirst
    var testDescription: String { rawValue }
    var indices: [Int] { self == .aFirst ? [0, 1] : [1, 0] }
  }

  @MainActor
  final class Screen {
    @Loadable var number: LoadableState<Int>
    @Process var save
  }

  /// Starts both calls (each parks at its gate), then opens the gates in `order`: after each, that call returns while
  /// the other's gate is still shut.
  func finish(
    _ order: Order, gates: [Gate], _ calls: [Task<Void, any Error>], sourceLocation: SourceLocation = #_sourceLocation
  ) async throws {
    for gate in gates { await gate.untilWaiting(1) }
    for index in order.indices {
      gates[index].open()
      try await calls[index].value(timeLimit: .seconds(30))
      #expect(gates[1 - index].waiting == (index == order.indices[0] ? 1 : 0), sourceLocation: sourceLocation)
    }
  }

  @Test(arguments: Order.allCases)
  func plainLoadsOfTwoStates(_ order: Order) async throws {
    let (a, b) = (Screen(), Screen())
    let gates = [Gate(), Gate()]
    let calls = [a, b].enumerated().map { index, screen in
      Task<Void, any Error> {
        await screen.$number.load {
          await gates[index].wait()
          return index
        }
      }
    }
    try await finish(order, gates: gates, calls)
    #expect(a.number == .loaded(0) && b.number == .loaded(1))
  }

  @Test(arguments: Order.allCases)
  func runsOfTwoProcesses(_ order: Order) async throws {
    let (a, b) = (Screen(), Screen())
    let gates = [Gate(), Gate()]
    let calls = [a, b].enumerated().map { index, screen in
      Task<Void, any Error> { await screen.$save.run { await gates[index].wait() } }
    }
    try await finish(order, gates: gates, calls)
    #expect(a.save.hasFinished && b.save.hasFinished)
  }

  @Test(arguments: Order.allCases)
  func cachedLoadsOfTwoKeysInOneCache(_ order: Order) async throws {
    let cache = LoadCache()
    let (a, b) = (Screen(), Screen())
    let gates = [Gate(), Gate()]
    let calls = [a, b].enumerated().map { index, screen in
      Task<Void, any Error> {
        await screen.$number.load(CacheKey<Int>("n", index), in: cache) {
          await gates[index].wait()
          return index
        }
      }
    }
    try await finish(order, gates: gates, calls)
    #expect(a.number == .loaded(0) && b.number == .loaded(1))
  }

  @Test(arguments: Order.allCases)
  func cachedRefreshesOfTwoKeys(_ order: Order) async throws {
    let cache = LoadCache(staleTime: .seconds(60))
    let (a, b) = (Screen(), Screen())
    await a.$number.load(CacheKey<Int>("n", 0), in: cache) { -1 }
    await b.$number.load(CacheKey<Int>("n", 1), in: cache) { -1 }
    let gates = [Gate(), Gate()]
    let calls = [a, b].enumerated().map { index, screen in
      Task<Void, any Error> {
        await screen.$number.refresh(CacheKey<Int>("n", index), in: cache) {
          await gates[index].wait()
          return index
        }
      }
    }
    try await finish(order, gates: gates, calls)
    #expect(a.number == .loaded(0) && b.number == .loaded(1))
  }

  @Test(arguments: Order.allCases)
  func mutationsOfOneKey(_ order: Order) async throws {
    let cache = LoadCache()
    cache.set(0, for: CacheKey<Int>("n"))
    let gates = [Gate(), Gate()]
    let calls = [0, 1].map { index in
      Task<Void, any Error> {
        try await cache.mutate(CacheKey<Int>("n"), optimistic: { $0 += 1 }) { await gates[index].wait() }
      }
    }
    try await finish(order, gates: gates, calls)
    #expect(cache.value(for: CacheKey<Int>("n")) == 2)  // both updates stay until the invalidation's fetch
  }

  @Test(arguments: Order.allCases)
  func mutationsOfTwoKeys(_ order: Order) async throws {
    let cache = LoadCache()
    let gates = [Gate(), Gate()]
    let calls = [0, 1].map { index in
      Task<Void, any Error> {
        try await cache.mutate(CacheKey<Int>("n", index), optimistic: { $0 += 1 }) { await gates[index].wait() }
      }
    }
    try await finish(order, gates: gates, calls)
  }

  @Test(arguments: Order.allCases)
  func permitsOfOneLimiter(_ order: Order) async throws {
    let limiter = LoadLimiter(maxConcurrent: 2)
    let gates = [Gate(), Gate()]
    let calls = [0, 1].map { index in
      Task<Void, any Error> { try await limiter.withPermit { await gates[index].wait() } }
    }
    try await finish(order, gates: gates, calls)
    #expect(limiter.running == 0 && limiter.waiting == 0)
  }

  @Test(arguments: Order.allCases)
  func loadsOfTwoStatesSharingALimiter(_ order: Order) async throws {
    let options = LoadOptions(limiter: LoadLimiter(maxConcurrent: 2))
    let (a, b) = (Screen(), Screen())
    let gates = [Gate(), Gate()]
    let calls = [a, b].enumerated().map { index, screen in
      Task<Void, any Error> {
        await screen.$number.load(options: options) {
          await gates[index].wait()
          return index
        }
      }
    }
    try await finish(order, gates: gates, calls)
  }

  /// Two callers joined to one cached fetch: the one cancelled returns at once; the other returns when the fetch
  /// ends, with its value.
  @Test(arguments: Order.allCases)
  func aCancelledCallerOfAJoinedFetchReturnsAtOnce(_ order: Order) async throws {
    let cache = LoadCache()
    let key = CacheKey<Int>("shared")
    let (a, b) = (Screen(), Screen())
    let gate = Gate()
    let screens = [a, b]
    let calls = screens.map { screen in
      Task<Void, any Error> {
        await screen.$number.load(key, in: cache) {
          await gate.wait()
          return 7
        }
      }
    }
    await gate.untilWaiting(1)
    let (cancelled, waiting) = order == .aFirst ? (0, 1) : (1, 0)
    calls[cancelled].cancel()
    try await calls[cancelled].value(timeLimit: .seconds(30))  // while the fetch is parked
    #expect(gate.waiting == 1)
    gate.open()
    try await calls[waiting].value(timeLimit: .seconds(30))
    #expect(screens[waiting].number == .loaded(7))
    #expect(cache.value(for: key) == 7)
  }

  /// Two actor-owned states of one actor: each caller returns when its own load ends.
  @Test(arguments: Order.allCases)
  func loadsOfTwoActorOwnedStates(_ order: Order) async throws {
    let service = TwoStates()
    let gates = [ActorGate(), ActorGate()]
    let calls = [0, 1].map { index in Task<Void, any Error> { await service.load(index, gates[index]) } }
    for gate in gates { await gate.untilWaiting(1) }
    for index in order.indices {
      gates[index].open()
      try await calls[index].value(timeLimit: .seconds(30))
      #expect(gates[1 - index].waiting == (index == order.indices[0] ? 1 : 0))
    }
    #expect(await service.values == [.loaded(0), .loaded(1)])
  }

  actor TwoStates {
    @IsolatedLoadable var first: LoadableState<Int> = .absent
    @IsolatedLoadable var second: LoadableState<Int> = .absent

    func load(_ index: Int, _ gate: ActorGate) async {
      let controller = index == 0 ? $first : $second
      await controller.load {
        await gate.wait()
        return index
      }
    }

    var values: [LoadableState<Int>] { [first, second] }
  }
}

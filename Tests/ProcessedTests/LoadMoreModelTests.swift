import ProcessedTesting
import Testing

@testable import Processed

/// A seeded, model-based test of paged lists: random `load`s, `refresh`es, `loadMore`s,
/// `cancel()`, `reset()`, manual writes and the success or failure of any fetch started so far (superseded ones
/// included; blocks ignore cancellation), against a reference list. After every step the state, whether a load is
/// active, which blocks ran and the cursor each `loadMore` asked for must match the model.
///
/// A failure prints its seed and the last operations.
@MainActor
@Suite struct LoadMoreModelTests {
  static let seeds: [UInt64] = [0x9A6E_0001, 0x9A6E_0002, 0x9A6E_0003, 0x9A6E_0004, 0x9A6E_0005]
  static let operations = 4_000

  @Test func randomPagingMatchesTheReferenceList() async {
    var total = 0
    for seed in Self.seeds {
      let run = PagingRun(seed: seed)
      total += await run.run(operations: Self.operations)
      if run.failed { break }
    }
    #expect(total == Self.seeds.count * Self.operations)
  }
}

/// One seeded run of ``LoadMoreModelTests``.
@MainActor
final class PagingRun {
  typealias Feed = Pages<Int, Int>
  typealias State = LoadableState<Feed>

  /// What the current load of the model is.
  enum Kind: Equatable {
    case load
    case refresh
    case more(base: [Int], cursor: Int)
  }

  /// A fetch whose block runs: its gate, its task and what it returns.
  struct Fetch {
    let gate: Gate
    let task: Task<Void, Never>
    let kind: Kind
    let result: Feed
  }

  struct Failure: Error {}

  private var random: MBRandom
  private let seed: UInt64
  private let model = PagedFeedModel()
  /// The reference state and the id of its current fetch (`nil`: no load in progress).
  private var expected: State = .absent
  private var current: (id: Int, kind: Kind)?
  private var fetches: [Int: Fetch] = [:]
  /// Tasks of calls that ran no block (joined or did nothing), awaited when their fetch ends.
  private var joined: [Task<Void, Never>] = []
  private var nextID = 1
  /// What the blocks reported: which fetch ran, and the cursor a `loadMore` was given.
  private var started: [Int: Int?] = [:]
  /// The ids in `started`, in the order the blocks ran; the first `checkedStarts` were checked.
  private var startedOrder: [Int] = []
  private var checkedStarts = 0
  private var log: [String] = []
  private(set) var failed = false

  init(seed: UInt64) {
    self.seed = seed
    random = MBRandom(seed: seed)
  }

  func run(operations: Int) async -> Int {
    var done = 0
    for _ in 0..<operations {
      await step()
      done += 1
      if !check() {
        failed = true
        Issue.record("paging model: seed \(seed) diverged; last operations:\n\(log.suffix(20).joined(separator: "\n"))")
        break
      }
      await Task.yield()  // one operation per turn of the main actor, so the tests beside it go on
    }
    // Every block waiting at a gate ends, so no task is left parked.
    for id in fetches.keys.sorted() { await finish(id, succeeding: true) }
    for task in joined { await task.value }
    return done
  }

  private func step() async {
    if fetches.count > 5 || (!fetches.isEmpty && random.percent(35)) {
      let id = random.pick(fetches.keys.sorted())
      await finish(id, succeeding: random.percent(75))
      return
    }
    switch random.below(7) {
    case 0: startLoad(refreshing: false)
    case 1: startLoad(refreshing: true)
    case 2, 3: startLoadMore()
    case 4:
      log.append("cancel")
      model.$feed.cancel()
      current = nil
    case 5:
      log.append("reset")
      model.$feed.reset()
      current = nil
      expected = .absent
    default:
      let value = Feed(items: [-nextID], nextCursor: random.percent(70) ? 1_000 + nextID : nil)
      nextID += 1
      log.append("write \(value)")
      model.feed = .loaded(value)
      current = nil
      expected = .loaded(value)
    }
  }

  private func makeResult(_ id: Int) -> Feed {
    Feed(items: [id * 10, id * 10 + 1], nextCursor: random.percent(80) ? id * 100 : nil)
  }

  private func startLoad(refreshing: Bool) {
    let id = nextID
    nextID += 1
    let gate = Gate()
    let result = makeResult(id)
    let succeeds = random.percent(75)
    let block: @MainActor () async throws -> Feed = { [weak self] in
      self?.started[id] = .some(nil)
      self?.startedOrder.append(id)
      await gate.wait()
      if !succeeds { throw Failure() }
      return result
    }
    log.append("\(refreshing ? "refresh" : "load") #\(id)")
    let task: Task<Void, Never> =
      refreshing ? model.$feed.refresh(block: block) : model.$feed.load(block: block)
    // Success or failure was decided now; `finish` only opens the gate.
    let kind: Kind = refreshing && expected.isLoaded ? .refresh : .load
    if kind == .load, !expected.isLoading { expected = .loading }
    current = (id, kind)
    fetches[id] = Fetch(gate: gate, task: task, kind: kind, result: succeeds ? result : Feed(items: [], nextCursor: -1))
  }

  private func startLoadMore() {
    let id = nextID
    nextID += 1
    let gate = Gate()
    let result = makeResult(id)
    let succeeds = random.percent(75)
    let block: @MainActor (Int) async throws -> Feed = { [weak self] cursor in
      self?.started[id] = cursor
      self?.startedOrder.append(id)
      await gate.wait()
      if !succeeds { throw Failure() }
      return result
    }
    log.append("loadMore #\(id)")
    let task: Task<Void, Never> = model.$feed.loadMore(block: block)
    if current != nil {
      joined.append(task)  // joins a running loadMore, or does nothing while a load or refresh runs: no block
      return
    }
    guard case .loaded(let pages) = expected, let cursor = pages.nextCursor else {
      joined.append(task)
      return
    }
    current = (id, .more(base: pages.items, cursor: cursor))
    fetches[id] = Fetch(
      gate: gate, task: task, kind: .more(base: pages.items, cursor: cursor),
      result: succeeds ? result : Feed(items: [], nextCursor: -1))
  }

  /// Lets fetch `id` end (its outcome was decided when it started) and applies it to the model if it is current.
  private func finish(_ id: Int, succeeding _: Bool) async {
    guard let fetch = fetches.removeValue(forKey: id) else { return }
    finished.insert(id)
    log.append("finish #\(id)")
    fetch.gate.open()
    await fetch.task.value
    let isCurrent = current?.id == id
    if isCurrent {
      current = nil
      let failedFetch = fetch.result.nextCursor == -1
      switch fetch.kind {
      case .load:
        expected = failedFetch ? .error(Failure()) : .loaded(fetch.result)
      case .refresh:
        if !failedFetch { expected = .loaded(fetch.result) }
      case .more(let base, _):
        if !failedFetch {
          expected = .loaded(Feed(items: base + fetch.result.items, nextCursor: fetch.result.nextCursor))
        }
      }
      // The calls that joined it (or did nothing meanwhile) have ended too.
      for task in joined { await task.value }
      joined = []
    }
  }

  private func check() -> Bool {
    var ok = true
    if !matches(model.feed, expected) {
      log.append("state \(model.feed) != expected \(expected)")
      ok = false
    }
    if model.$feed.activity.isActive != (current != nil) {
      log.append("activity \(model.$feed.activity.phase), expected a load: \(current != nil)")
      ok = false
    }
    // A block ran exactly for the fetches the model started, and a `loadMore` got the model's cursor. Each block is
    // checked once, at the first check after it started: a fetch's kind never changes, and a fetch the model started
    // leaves `fetches` only for `finished`.
    for id in startedOrder[checkedStarts...] {
      if let fetch = fetches[id] {
        if case .more(_, let expectedCursor) = fetch.kind, let cursor = started[id], cursor != expectedCursor {
          log.append("loadMore #\(id) asked for \(String(describing: cursor)), expected \(expectedCursor)")
          ok = false
        }
      } else if !finished.contains(id) {
        log.append("block #\(id) ran, but the model started no fetch for it")
        ok = false
      }
    }
    checkedStarts = startedOrder.count
    return ok
  }

  private var finished: Set<Int> = []

  private func matches(_ state: State, _ expected: State) -> Bool {
    switch (state, expected) {
    case (.absent, .absent), (.loading, .loading): true
    case (.error(let error), .error): error is Failure
    case (.loaded(let value), .loaded(let expectedValue)): value == expectedValue
    default: false
    }
  }
}

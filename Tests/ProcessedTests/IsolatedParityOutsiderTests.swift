import Processed
import ProcessedTesting
import Testing

// An outsider's parity checks, written from SPEC.md ("Every face on any actor", "Calm presentation", "Paged lists",
// "Loads owned by any actor") and the public doc comments only. Each scenario runs on an actor-owned state
// (`@IsolatedLoadable` in an `actor`, observed inside the actor) and on a main-actor state (`@Loadable` in a
// `@MainActor` class), each with a fresh `TestClock` and `LoadCache`; the two observer histories must be equal and
// equal to what the spec says. Time moves only through the `TestClock`; every wait that could hang has a real-time
// limit that fails the test instead.

/// The real-time limit of every wait below: reached only by a bug.
private let outsiderHang = Duration.seconds(60)

private func ms(_ value: Int) -> Duration { .milliseconds(value) }

private func advance(_ clock: TestClock, to milliseconds: Int) {
  clock.advance(to: TestClock.Instant(offset: .milliseconds(milliseconds)))
}

struct OutsiderFailure: Error, Equatable {}

/// A wait that did not end within ``outsiderHang``.
struct OutsiderHang: Error, CustomStringConvertible {
  let description: String
}

/// Waits (polling with `Task.yield()`, bounded by ``outsiderHang``) until `condition` holds; throws when it never did.
private func outsiderUntil(
  _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ condition: @Sendable () async -> Bool
) async throws {
  if await parityEventually(what, timeLimit: outsiderHang, sourceLocation: sourceLocation, condition) { return }
  throw OutsiderHang(description: what)
}

/// Flags a block or a caller sets as it goes: "started", "returned", "cancelled", "ended", "deinit".
final class OutsiderMarks: Sendable {
  private let marks = LockedBox<[String]>([])
  func mark(_ mark: String) { marks.withLock { $0.append(mark) } }
  func has(_ mark: String) -> Bool { marks.withLock { $0.contains(mark) } }
  func count(_ mark: String) -> Int { marks.withLock { $0.filter { $0 == mark }.count } }
}

/// One change an observer saw, with the `TestClock` time at which it saw it.
struct OutsiderStamp<Value: Sendable & Equatable>: Equatable, Sendable, CustomStringConvertible {
  var state: LoadableState<Value>
  var at: Duration
  var description: String { "\(state) at \(at)" }
}

/// What an observer recorded, readable from any isolation.
final class OutsiderLog<Value: Sendable & Equatable>: Sendable {
  private let stamps = LockedBox<[OutsiderStamp<Value>]>([])
  func append(_ state: LoadableState<Value>, at time: Duration) {
    stamps.withLock { $0.append(OutsiderStamp(state: state, at: time)) }
  }
  var all: [OutsiderStamp<Value>] { stamps.withLock { $0 } }
  var states: [LoadableState<Value>] { all.map(\.state) }
  var count: Int { stamps.withLock { $0.count } }
}

/// A block's work: optionally fails its first attempts, optionally waits at a gate (ignoring cancellation), optionally
/// sleeps on the clock until an absolute instant (so a late start never moves its deadline), then returns `result`, or
/// throws when it is `nil`.
struct OutsiderWork: Sendable {
  var gate: ActorGate? = nil
  var clock: TestClock? = nil
  var until: Duration? = nil
  var result: Int?
  /// The first `failures` attempts throw at once.
  var failures = 0
  let marks = OutsiderMarks()

  nonisolated(nonsending) func run() async throws -> Int {
    marks.mark("started")
    if marks.count("started") <= failures { throw OutsiderFailure() }
    if let gate { await gate.wait() }
    if let clock, let until {
      do {
        try await clock.sleep(until: TestClock.Instant(offset: until))
      } catch {
        marks.mark("cancelled")
        throw error
      }
    }
    marks.mark("returned")
    guard let result else { throw OutsiderFailure() }
    return result
  }
}

/// A page fetch: like ``OutsiderWork``; the first `failures` attempts throw at once; answers `[cursor * 10]` with the
/// next cursor `cursor + 1`.
struct OutsiderPageWork: Sendable {
  var gate: ActorGate? = nil
  var clock: TestClock? = nil
  var until: Duration? = nil
  var failures = 0
  let marks = OutsiderMarks()

  nonisolated(nonsending) func run(_ cursor: Int) async throws -> Pages<Int, Int> {
    marks.mark("started")
    if marks.count("started") <= failures { throw OutsiderFailure() }
    if let gate { await gate.wait() }
    if let clock, let until {
      do {
        try await clock.sleep(until: TestClock.Instant(offset: until))
      } catch {
        marks.mark("cancelled")
        throw error
      }
    }
    marks.mark("returned")
    return Pages(items: [cursor * 10], nextCursor: cursor + 1)
  }
}

/// The calls each scenario makes, on either owner.
protocol OutsiderFace: AnyObject, Sendable {
  var xLog: OutsiderLog<Int> { get }
  var listLog: OutsiderLog<Pages<Int, Int>> { get }
  func observe(_ clock: TestClock) async
  func write(_ state: LoadableState<Int>) async
  func writeList(_ state: LoadableState<Pages<Int, Int>>) async
  func state() async -> LoadableState<Int>
  func listState() async -> LoadableState<Pages<Int, Int>>
  func lastErrorIsFailure() async -> Bool
  func refreshCached(_ key: CacheKey<Int>, _ work: OutsiderWork, _ options: LoadOptions?) async -> Task<Void, Never>
  func refreshCachedAwaiting(_ key: CacheKey<Int>, _ work: OutsiderWork, _ options: LoadOptions?) async
  func loadAwaiting(_ work: OutsiderWork) async
  func loadCachedAwaiting(_ key: CacheKey<Int>, _ work: OutsiderWork) async
  func refreshAwaiting(_ work: OutsiderWork) async
  func loadMore(_ work: OutsiderPageWork, _ options: LoadOptions?) async -> Task<Void, Never>
  func loadMoreAwaiting(_ work: OutsiderPageWork, _ options: LoadOptions?) async
  func load(_ work: OutsiderWork) async -> Task<Void, Never>
  func loadList(_ work: OutsiderWork) async -> Task<Void, Never>
}

@MainActor
final class OutsiderMainOwner: OutsiderFace {
  @Loadable var x: LoadableState<Int>
  @Loadable var list: LoadableState<Pages<Int, Int>>
  let cache: LoadCache
  nonisolated let xLog = OutsiderLog<Int>()
  nonisolated let listLog = OutsiderLog<Pages<Int, Int>>()
  var tokens: [ObservationToken] = []

  init(cache: LoadCache) { self.cache = cache }

  func observe(_ clock: TestClock) {
    let xLog = xLog
    let listLog = listLog
    tokens.append($x.observe { xLog.append($0, at: clock.now.offset) })
    tokens.append($list.observe { listLog.append($0, at: clock.now.offset) })
  }
  func write(_ state: LoadableState<Int>) { x = state }
  func writeList(_ state: LoadableState<Pages<Int, Int>>) { list = state }
  func state() -> LoadableState<Int> { x }
  func listState() -> LoadableState<Pages<Int, Int>> { list }
  func lastErrorIsFailure() -> Bool { $x.activity.lastError is OutsiderFailure }
  func refreshCached(_ key: CacheKey<Int>, _ work: OutsiderWork, _ options: LoadOptions?) -> Task<Void, Never> {
    $x.refresh(key, in: cache, options: options) { try await work.run() }
  }
  func refreshCachedAwaiting(_ key: CacheKey<Int>, _ work: OutsiderWork, _ options: LoadOptions?) async {
    await $x.refresh(key, in: cache, options: options) { try await work.run() }
  }
  func loadAwaiting(_ work: OutsiderWork) async {
    await $x.load { try await work.run() }
  }
  func loadCachedAwaiting(_ key: CacheKey<Int>, _ work: OutsiderWork) async {
    await $x.load(key, in: cache) { try await work.run() }
  }
  func refreshAwaiting(_ work: OutsiderWork) async {
    await $x.refresh { try await work.run() }
  }
  func loadMore(_ work: OutsiderPageWork, _ options: LoadOptions?) -> Task<Void, Never> {
    $list.loadMore(options: options) { (cursor: Int) in try await work.run(cursor) }
  }
  func loadMoreAwaiting(_ work: OutsiderPageWork, _ options: LoadOptions?) async {
    await $list.loadMore(options: options) { (cursor: Int) in try await work.run(cursor) }
  }
  func load(_ work: OutsiderWork) -> Task<Void, Never> {
    $x.load { try await work.run() }
  }
  func loadList(_ work: OutsiderWork) -> Task<Void, Never> {
    $list.load { Pages(items: [try await work.run()], nextCursor: nil) }
  }
}

actor OutsiderActorOwner: OutsiderFace {
  @IsolatedLoadable var x: LoadableState<Int> = .absent
  @IsolatedLoadable var list: LoadableState<Pages<Int, Int>> = .absent
  let cache: LoadCache
  nonisolated let xLog = OutsiderLog<Int>()
  nonisolated let listLog = OutsiderLog<Pages<Int, Int>>()
  var tokens: [ObservationToken] = []

  init(cache: LoadCache) { self.cache = cache }

  /// The observers run inside the actor; they capture only the logs and the clock, never the actor.
  func observe(_ clock: TestClock) {
    let xLog = xLog
    let listLog = listLog
    tokens.append($x.observe { xLog.append($0, at: clock.now.offset) })
    tokens.append($list.observe { listLog.append($0, at: clock.now.offset) })
  }
  func write(_ state: LoadableState<Int>) { x = state }
  func writeList(_ state: LoadableState<Pages<Int, Int>>) { list = state }
  func state() -> LoadableState<Int> { x }
  func listState() -> LoadableState<Pages<Int, Int>> { list }
  func lastErrorIsFailure() -> Bool { $x.activity.lastError is OutsiderFailure }
  func refreshCached(_ key: CacheKey<Int>, _ work: OutsiderWork, _ options: LoadOptions?) -> Task<Void, Never> {
    $x.refresh(key, in: cache, options: options) { try await work.run() }
  }
  func refreshCachedAwaiting(_ key: CacheKey<Int>, _ work: OutsiderWork, _ options: LoadOptions?) async {
    await $x.refresh(key, in: cache, options: options) { try await work.run() }
  }
  func loadAwaiting(_ work: OutsiderWork) async {
    await $x.load { try await work.run() }
  }
  func loadCachedAwaiting(_ key: CacheKey<Int>, _ work: OutsiderWork) async {
    await $x.load(key, in: cache) { try await work.run() }
  }
  func refreshAwaiting(_ work: OutsiderWork) async {
    await $x.refresh { try await work.run() }
  }
  func loadMore(_ work: OutsiderPageWork, _ options: LoadOptions?) -> Task<Void, Never> {
    $list.loadMore(options: options) { (cursor: Int) in try await work.run(cursor) }
  }
  func loadMoreAwaiting(_ work: OutsiderPageWork, _ options: LoadOptions?) async {
    await $list.loadMore(options: options) { (cursor: Int) in try await work.run(cursor) }
  }
  func load(_ work: OutsiderWork) -> Task<Void, Never> {
    $x.load { try await work.run() }
  }
  func loadList(_ work: OutsiderWork) -> Task<Void, Never> {
    $list.load { Pages(items: [try await work.run()], nextCursor: nil) }
  }
}

enum OutsiderSide: String, CaseIterable, Sendable {
  case mainActor, actor
}

private func makeFace(_ side: OutsiderSide, _ cache: LoadCache) async -> any OutsiderFace {
  switch side {
  case .mainActor: await MainActor.run { OutsiderMainOwner(cache: cache) }
  case .actor: OutsiderActorOwner(cache: cache)
  }
}

/// Which form of a call a scenario uses.
enum OutsiderForm: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case task, async
  var testDescription: String { rawValue }
}

/// Starts `refresh(key, in: cache)` in `form`; for the `async` form, a task that makes the awaiting call and returns
/// when it does.
private func startCachedRefresh(
  _ form: OutsiderForm, _ face: any OutsiderFace, _ key: CacheKey<Int>, _ work: OutsiderWork, _ options: LoadOptions
) async -> Task<Void, Never> {
  switch form {
  case .task: await face.refreshCached(key, work, options)
  case .async: Task { await face.refreshCachedAwaiting(key, work, options) }
  }
}

/// A task that marks "ended" in `marks` once `task` ends.
private func watch(_ task: Task<Void, Never>, _ marks: OutsiderMarks) -> Task<Void, Never> {
  Task {
    await task.value
    marks.mark("ended")
  }
}

// MARK: - Main-actor owner of a paged list, for the lifetime scenarios

@MainActor
final class OutsiderPagedModel {
  @Loadable var list: LoadableState<Pages<Int, Int>> = .loaded(Pages(items: [0], nextCursor: 1))
  let log = OutsiderLog<Pages<Int, Int>>()
  let marks: OutsiderMarks
  var token: ObservationToken?

  init(marks: OutsiderMarks) { self.marks = marks }
  deinit { marks.mark("deinit") }

  func observe(_ clock: TestClock) {
    let log = log
    token = $list.observe { log.append($0, at: clock.now.offset) }
  }
  func more(_ work: OutsiderPageWork, _ options: LoadOptions) -> Task<Void, Never> {
    $list.loadMore(options: options) { (cursor: Int) in try await work.run(cursor) }
  }
}

/// Makes the awaiting `loadMore` call with a controller the caller does not keep: the call consumes it.
@MainActor
private func awaitMore(
  _ controller: consuming LoadableController<Pages<Int, Int>>, _ work: OutsiderPageWork, _ options: LoadOptions
) async {
  await controller.loadMore(options: options) { (cursor: Int) in try await work.run(cursor) }
}

// MARK: - Actor owner of a paged list, for the lifetime scenarios

actor OutsiderPagedActor {
  @IsolatedLoadable var list: LoadableState<Pages<Int, Int>> = .loaded(Pages(items: [0], nextCursor: 1))
  nonisolated let log = OutsiderLog<Pages<Int, Int>>()
  nonisolated let marks: OutsiderMarks
  var token: ObservationToken?

  init(marks: OutsiderMarks) { self.marks = marks }
  deinit { marks.mark("deinit") }

  func observe(_ clock: TestClock) {
    let log = log
    token = $list.observe { log.append($0, at: clock.now.offset) }
  }
  func more(_ work: OutsiderPageWork, _ options: LoadOptions) -> Task<Void, Never> {
    $list.loadMore(options: options) { (cursor: Int) in try await work.run(cursor) }
  }
  func moreAwaiting(_ work: OutsiderPageWork, _ options: LoadOptions) async {
    await $list.loadMore(options: options) { (cursor: Int) in try await work.run(cursor) }
  }
}

// MARK: - Actor owner of a value, for the lifetime scenarios of the other faces

actor OutsiderValueActor {
  @IsolatedLoadable var x: LoadableState<Int> = .absent
  nonisolated let log = OutsiderLog<Int>()
  nonisolated let marks: OutsiderMarks
  var token: ObservationToken?

  init(marks: OutsiderMarks) { self.marks = marks }
  deinit { marks.mark("deinit") }

  func observe(_ clock: TestClock) {
    let log = log
    token = $x.observe { log.append($0, at: clock.now.offset) }
  }
  func load(_ face: IsolatedParityOutsiderTests.Face, _ work: OutsiderWork, _ options: LoadOptions, _ cache: LoadCache)
    -> Task<Void, Never>
  {
    switch face {
    case .plain, .calm: $x.load(options: options) { try await work.run() }
    case .cached: $x.load(CacheKey<Int>("released"), in: cache, options: options) { try await work.run() }
    }
  }
}

@Suite struct IsolatedParityOutsiderTests {
  static func calm(_ clock: TestClock) -> LoadOptions {
    LoadOptions(loadingDelay: ms(300), minimumLoadingTime: ms(500), clock: clock)
  }

  // MARK: 1. refresh(key, in:) with calm options

  /// Spec: with an empty entry `refresh(key, in:)` is an ordinary load — its `.loading` waits for `loadingDelay`, and
  /// the result is held until `minimumLoadingTime` after the spinner appeared; the Task and the `async` caller wait
  /// for the held write. Once the entry has a value, a refresh writes no `.loading` (so nothing is held), does not
  /// write the value the state already shows again, writes the new answer when its fetch ends, and a failure keeps
  /// the value and sets `activity.lastError`.
  @Test(arguments: OutsiderForm.allCases)
  func calmCachedRefreshFromAnEmptyEntryThenFromItsValue(_ form: OutsiderForm) async throws {
    var histories: [OutsiderSide: [OutsiderStamp<Int>]] = [:]
    for side in OutsiderSide.allCases {
      let clock = TestClock()
      let cache = LoadCache(staleTime: .seconds(3_600), clock: clock)
      let face = await makeFace(side, cache)
      await face.observe(clock)
      let key = CacheKey<Int>("calm-refresh")
      let options = Self.calm(clock)

      // 1. Empty entry: the fetch answers at 400 ms.
      let first = OutsiderWork(clock: clock, until: ms(400), result: 1)
      let firstEnd = OutsiderMarks()
      let firstCall = watch(await startCachedRefresh(form, face, key, first, options), firstEnd)
      try await clock.waitForSleepers(2, timeLimit: outsiderHang)  // the fetch and the loading delay
      #expect(face.xLog.count == 0, "\(side): nothing is written within the delay")
      advance(clock, to: 299)
      #expect(face.xLog.count == 0, "\(side): nothing is written within the delay")
      advance(clock, to: 300)
      try await outsiderUntil("\(side): the spinner at 300 ms") { face.xLog.count == 1 }
      advance(clock, to: 400)
      try await outsiderUntil("\(side): the first fetch answered") { first.marks.has("returned") }
      try await clock.waitForSleepers(1, timeLimit: outsiderHang)  // the minimum's hold
      advance(clock, to: 799)
      #expect(face.xLog.count == 1, "\(side): the answer is held until 800 ms")
      #expect(!firstEnd.has("ended"), "\(side): the call waits for the held write")
      advance(clock, to: 800)
      try await firstCall.value(timeLimit: outsiderHang, clock: clock)
      #expect(
        face.xLog.all == [OutsiderStamp(state: .loading, at: ms(300)), OutsiderStamp(state: .loaded(1), at: ms(800))],
        "\(side)")

      // 2. The entry has 1, the state shows it: the refresh writes nothing until its answer at 1000 ms.
      let second = OutsiderWork(clock: clock, until: ms(1_000), result: 2)
      let secondCall = await startCachedRefresh(form, face, key, second, options)
      try await outsiderUntil("\(side): the second fetch started") { second.marks.has("started") }
      #expect(face.xLog.count == 2, "\(side): a refresh of a shown value writes nothing at its start")
      #expect(await face.state() == .loaded(1))
      advance(clock, to: 1_000)
      try await secondCall.value(timeLimit: outsiderHang, clock: clock)

      // 3. A failing refresh keeps the value and reports the error in the activity.
      let third = OutsiderWork(clock: clock, until: ms(1_100), result: nil)
      let thirdCall = await startCachedRefresh(form, face, key, third, options)
      try await outsiderUntil("\(side): the third fetch started") { third.marks.has("started") }
      advance(clock, to: 1_100)
      try await thirdCall.value(timeLimit: outsiderHang, clock: clock)
      #expect(await face.state() == .loaded(2), "\(side)")
      #expect(await face.lastErrorIsFailure(), "\(side): the failed refresh's error is in activity.lastError")
      #expect(await MainActor.run { cache.value(for: key) } == 2, "\(side)")

      histories[side] = face.xLog.all
      #expect(
        face.xLog.all == [
          OutsiderStamp(state: .loading, at: ms(300)), OutsiderStamp(state: .loaded(1), at: ms(800)),
          OutsiderStamp(state: .loaded(2), at: ms(1_000)),
        ], "\(side)")
    }
    #expect(histories[.actor] == histories[.mainActor])
  }

  /// Spec: a second `refresh(key, in:)` while the first one's spinner is up cancels the fetch in flight and starts it
  /// again; the `.loading` on screen is not written again, and the new answer is held until `minimumLoadingTime`
  /// after the spinner appeared ("a load that supersedes one whose spinner is up inherits its start"). The first
  /// fetch's block is cancelled and never answers; both calls end once the held answer is written.
  @Test(arguments: OutsiderForm.allCases)
  func aCachedRefreshWhileTheSpinnerIsUpInheritsItsStart(_ form: OutsiderForm) async throws {
    var histories: [OutsiderSide: [OutsiderStamp<Int>]] = [:]
    for side in OutsiderSide.allCases {
      let clock = TestClock()
      let cache = LoadCache(staleTime: .seconds(3_600), clock: clock)
      let face = await makeFace(side, cache)
      await face.observe(clock)
      let key = CacheKey<Int>("calm-refresh-again")
      let options = Self.calm(clock)

      let first = OutsiderWork(clock: clock, until: ms(1_000), result: 1)
      let firstCall = await startCachedRefresh(form, face, key, first, options)
      try await clock.waitForSleepers(2, timeLimit: outsiderHang)  // the fetch and the loading delay
      advance(clock, to: 300)
      try await outsiderUntil("\(side): the spinner at 300 ms") { face.xLog.count == 1 }
      advance(clock, to: 350)

      let second = OutsiderWork(clock: clock, until: ms(450), result: 2)
      let secondEnd = OutsiderMarks()
      let secondCall = watch(await startCachedRefresh(form, face, key, second, options), secondEnd)
      try await outsiderUntil("\(side): the second fetch started") { second.marks.has("started") }
      try await outsiderUntil("\(side): the first fetch was cancelled") { first.marks.has("cancelled") }
      advance(clock, to: 450)
      try await outsiderUntil("\(side): the second fetch answered") { second.marks.has("returned") }
      advance(clock, to: 799)
      #expect(face.xLog.count == 1, "\(side): the answer is held until 800 ms")
      #expect(!secondEnd.has("ended"), "\(side): the call waits for the held write")
      advance(clock, to: 800)
      try await secondCall.value(timeLimit: outsiderHang, clock: clock)
      try await firstCall.value(timeLimit: outsiderHang, clock: clock)
      #expect(!first.marks.has("returned"), "\(side): the first fetch never answered")
      #expect(await face.state() == .loaded(2), "\(side)")
      #expect(clock.sleeperCount == 0, "\(side)")

      histories[side] = face.xLog.all
      #expect(
        face.xLog.all == [OutsiderStamp(state: .loading, at: ms(300)), OutsiderStamp(state: .loaded(2), at: ms(800))],
        "\(side)")
    }
    #expect(histories[.actor] == histories[.mainActor])
  }

  /// Spec ("Calm presentation"): a held load ends when its result is written — until then its Task runs and its
  /// `async` caller waits — and "a cancellation during the hold is a cancellation": with `.restorePreviousState`
  /// cancelling the call (its Task, or its `async` caller's task) while the answer is held writes back the state the
  /// spinner replaced, at once, and the held answer is never written.
  @Test(arguments: OutsiderForm.allCases)
  func cancellingACachedRefreshDuringTheHoldRestoresThePreviousState(_ form: OutsiderForm) async throws {
    var histories: [OutsiderSide: [OutsiderStamp<Int>]] = [:]
    for side in OutsiderSide.allCases {
      let clock = TestClock()
      let cache = LoadCache(staleTime: .seconds(3_600), clock: clock)
      let face = await makeFace(side, cache)
      await face.observe(clock)
      let key = CacheKey<Int>("calm-refresh-cancelled")
      let options = LoadOptions(minimumLoadingTime: ms(500), cancellation: .restorePreviousState, clock: clock)

      let work = OutsiderWork(clock: clock, until: ms(100), result: 1)
      let call = await startCachedRefresh(form, face, key, work, options)
      try await outsiderUntil("\(side): the spinner at once") { face.xLog.count == 1 }
      try await clock.waitForSleepers(1, timeLimit: outsiderHang)  // the fetch
      advance(clock, to: 100)
      try await outsiderUntil("\(side): the fetch answered") { work.marks.has("returned") }
      try await clock.waitForSleepers(1, timeLimit: outsiderHang)  // the minimum's hold
      advance(clock, to: 200)
      #expect(face.xLog.count == 1, "\(side): the answer is held")
      call.cancel()
      // A cancelled call stops at once (the limit only catches a hang), then the scenario goes on to show what happened.
      let endedOnCancel = (try? await call.value(timeLimit: outsiderHang, clock: clock)) != nil
      #expect(endedOnCancel, "\(side): the call cancelled during the hold ends without waiting for the hold")
      if endedOnCancel {
        try await outsiderUntil("\(side): the previous state is written back") { face.xLog.count == 2 }
      }
      advance(clock, to: 600)
      try await call.value(timeLimit: outsiderHang, clock: clock)
      #expect(await face.state() == .absent, "\(side)")

      histories[side] = face.xLog.all
      #expect(
        face.xLog.all == [OutsiderStamp(state: .loading, at: .zero), OutsiderStamp(state: .absent, at: ms(200))],
        "\(side)")
    }
    #expect(histories[.actor] == histories[.mainActor])
  }

  // MARK: 2. loadMore while its owner is released

  enum Hold: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// The page's block sleeps on the clock.
    case fetchOnClock
    /// The first attempt fails; the retry waits on the clock.
    case retryDelay
    var testDescription: String { rawValue }
  }

  /// Docs (LoadsOwnedByAnActor, "Lifetime"): "a running load keeps its actor alive (its task holds it)"; "when no load
  /// runs, releasing the actor ends `states`". So the released actor lives on until its `loadMore` ends: the page is
  /// appended (seen by the actor's observer), the awaiting caller returns, and then the actor goes; nothing is
  /// written after that.
  @Test(arguments: Hold.allCases, OutsiderForm.allCases)
  func anActorReleasedDuringItsLoadMoreLivesUntilThePageIsAppended(_ hold: Hold, _ form: OutsiderForm) async throws {
    let clock = TestClock()
    let marks = OutsiderMarks()
    var owner: OutsiderPagedActor? = OutsiderPagedActor(marks: marks)
    weak let released = owner
    await owner!.observe(clock)
    let log = owner!.log
    let work = OutsiderPageWork(
      clock: clock, until: hold == .fetchOnClock ? .seconds(1) : nil, failures: hold == .retryDelay ? 1 : 0)
    let options = LoadOptions(
      retry: hold == .retryDelay ? .constant(.seconds(1), maxRetries: 1) : .never,
      minimumLoadingTime: .seconds(5), clock: clock)
    let caller: Task<Void, Never>
    switch form {
    case .task: caller = await owner!.more(work, options)
    case .async:
      let kept = owner!
      caller = Task { await kept.moreAwaiting(work, options) }
    }
    try await clock.waitForSleepers(1, timeLimit: outsiderHang)  // the page's fetch, or the retry delay
    owner = nil
    #expect(released != nil, "a running load keeps its actor alive")
    #expect(log.count == 0)
    clock.advance(by: .seconds(1))
    try await caller.value(timeLimit: outsiderHang, clock: clock)
    #expect(log.all == [OutsiderStamp(state: .loaded(Pages(items: [0, 10], nextCursor: 2)), at: .seconds(1))])
    #expect(work.marks.count("started") == (hold == .retryDelay ? 2 : 1))
    try await outsiderUntil("the actor goes once its load has ended") { marks.has("deinit") }
    #expect(released == nil)
    clock.advance(by: .seconds(10))
    #expect(clock.sleeperCount == 0)
    #expect(log.count == 1, "nothing is written after the owner is gone")
  }

  enum Face: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// `$x.load(options:)`: the actor's own driver.
    case plain
    /// `$x.load(options:)` with `loadingDelay` (calm presentation).
    case calm
    /// `$x.load(key, in: cache)` with an empty entry.
    case cached
    var testDescription: String { rawValue }
  }

  /// The same lifetime rule for the other faces of an actor-owned state, with the actor's plain `load` as the
  /// control: "A running load keeps its owning actor alive until it ends" (spec, "Loads owned by any actor"). A Task
  /// form load whose owner's last outside reference is released while the load waits on the clock (its fetch, or
  /// its retry delay) keeps the actor, ends with its result written and observed, and then lets the actor go.
  @Test(arguments: Face.allCases, Hold.allCases)
  func anActorReleasedDuringALoadLivesUntilItsResultIsWritten(_ face: Face, _ hold: Hold) async throws {
    let clock = TestClock()
    let cache = LoadCache(staleTime: .seconds(3_600), clock: clock)
    let marks = OutsiderMarks()
    var owner: OutsiderValueActor? = OutsiderValueActor(marks: marks)
    weak let released = owner
    await owner!.observe(clock)
    let log = owner!.log
    let work = OutsiderWork(
      clock: clock, until: hold == .fetchOnClock ? .seconds(1) : nil, result: 1,
      failures: hold == .retryDelay ? 1 : 0)
    let options = LoadOptions(
      retry: hold == .retryDelay ? .constant(.seconds(1), maxRetries: 1) : .never,
      loadingDelay: face == .calm ? ms(300) : nil, clock: clock)
    let caller = await owner!.load(face, work, options, cache)
    // The fetch (or the retry delay), and the loading delay of the calm load.
    try await clock.waitForSleepers(face == .calm ? 2 : 1, timeLimit: outsiderHang)
    owner = nil
    // Without its actor the load cannot go on: the rest of the scenario would only wait for what cannot come.
    try #require(released != nil, "a running load keeps its actor alive")
    let spinnerAt = face == .calm ? ms(300) : .zero
    if face == .calm {
      advance(clock, to: 300)
      try await outsiderUntil("the spinner at 300 ms") { log.count == 1 }
    }
    advance(clock, to: 1_000)
    try await caller.value(timeLimit: outsiderHang, clock: clock)
    #expect(
      log.all == [OutsiderStamp(state: .loading, at: spinnerAt), OutsiderStamp(state: .loaded(1), at: .seconds(1))])
    #expect(work.marks.count("started") == (hold == .retryDelay ? 2 : 1))
    try await outsiderUntil("the actor goes once its load has ended") { marks.has("deinit") }
    clock.advance(by: .seconds(10))
    #expect(clock.sleeperCount == 0)
    #expect(log.count == 2, "nothing is written after the owner is gone")
  }

  enum MainHold: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// The page's block sleeps on the clock (and so stops when cancelled).
    case fetchOnClock
    /// The page's block waits at a gate and ignores cancellation.
    case gateIgnoringCancellation
    var testDescription: String { rawValue }
  }

  /// Spec B10 and "One state, one owner": deallocating a wrapper's storage cancels its running load; an `async`
  /// caller does not keep the state alive — when the owner goes away the load is cancelled and the caller returns,
  /// as for the Task form. So the released main-actor model is gone at once, its page's fetch is cancelled, the page
  /// is never appended (its observer sees nothing), and both forms of the call end.
  @MainActor
  @Test(arguments: MainHold.allCases, OutsiderForm.allCases)
  func aMainActorModelReleasedDuringItsLoadMoreCancelsIt(_ hold: MainHold, _ form: OutsiderForm) async throws {
    let clock = TestClock()
    let marks = OutsiderMarks()
    let gate = ActorGate()
    var model: OutsiderPagedModel? = OutsiderPagedModel(marks: marks)
    model!.observe(clock)
    let log = model!.log
    let work = OutsiderPageWork(
      gate: hold == .gateIgnoringCancellation ? gate : nil, clock: clock,
      until: hold == .fetchOnClock ? .seconds(1) : nil)
    let options = LoadOptions(minimumLoadingTime: .seconds(5), clock: clock)
    let caller: Task<Void, Never>
    switch form {
    case .task: caller = model!.more(work, options)
    case .async:
      caller = Task { @MainActor [weak model] in
        guard let controller = model?.$list else { return }
        await awaitMore(consume controller, work, options)
      }
    }
    switch hold {
    case .fetchOnClock: try await clock.waitForSleepers(1, timeLimit: outsiderHang)
    case .gateIgnoringCancellation: try await outsiderUntil("the page's fetch waits") { gate.waiting == 1 }
    }
    model = nil
    #expect(marks.has("deinit"), "nothing the library keeps retains the model")
    switch hold {
    case .fetchOnClock:
      try await outsiderUntil("the page's fetch is cancelled") { work.marks.has("cancelled") }
      #expect(clock.sleeperCount == 0)
    case .gateIgnoringCancellation:
      gate.open()
    }
    try await caller.value(timeLimit: outsiderHang, clock: clock)
    clock.advance(by: .seconds(10))
    #expect(log.count == 0, "the page is never appended: \(log.all)")
  }

  /// Spec ("Paged lists"): `loadMore` takes a load's options, but debounce and the calm-presentation fields do not
  /// apply — it never waits before it starts, writes no start state and is not held. With a block that answers at
  /// once, the page is appended and the call ends without the clock moving.
  @Test(arguments: OutsiderForm.allCases)
  func loadMoreIgnoresDebounceAndCalmOptions(_ form: OutsiderForm) async throws {
    var histories: [OutsiderSide: [OutsiderStamp<Pages<Int, Int>>]] = [:]
    for side in OutsiderSide.allCases {
      let clock = TestClock()
      let face = await makeFace(side, LoadCache(clock: clock))
      await face.writeList(.loaded(Pages(items: [0], nextCursor: 1)))
      await face.observe(clock)
      let options = LoadOptions(
        debounce: .trailing(.seconds(1)), loadingDelay: ms(300), minimumLoadingTime: .seconds(1),
        cancellation: .restorePreviousState, clock: clock)
      let work = OutsiderPageWork()
      let call: Task<Void, Never>
      switch form {
      case .task: call = await face.loadMore(work, options)
      case .async: call = Task { await face.loadMoreAwaiting(work, options) }
      }
      try await call.value(timeLimit: outsiderHang, clock: clock)
      #expect(clock.now == TestClock.Instant(offset: .zero))
      #expect(clock.sleeperCount == 0, "\(side)")
      histories[side] = face.listLog.all
      #expect(
        face.listLog.all == [OutsiderStamp(state: .loaded(Pages(items: [0, 10], nextCursor: 2)), at: .zero)],
        "\(side)")
    }
    #expect(histories[.actor] == histories[.mainActor])
  }

  // MARK: 3. Superseded async forms

  enum Superseded: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case load, cachedLoad, refresh, cachedRefresh, loadMore
    var testDescription: String { rawValue }
  }

  enum Order: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// The superseded call's own work ends while the newer load still runs.
    case supersededWorkEndsFirst
    /// The newer load ends first; the superseded call's work ends after it.
    case newerEndsFirst
    var testDescription: String { rawValue }
  }

  /// Spec B1/B6/B8, "Paged lists", "Every face on any actor": an `async` call superseded by a newer load of its state
  /// returns (at the latest when its own work ends, whatever the newer load does), its block's answer is never
  /// written — not before the newer answer, not after it — and observers see exactly the newer load's history.
  @Test(arguments: Superseded.allCases, Order.allCases)
  func aSupersededAsyncCallReturnsAndItsAnswerIsNeverWritten(_ call: Superseded, _ order: Order) async throws {
    var histories: [OutsiderSide: [String]] = [:]
    for side in OutsiderSide.allCases {
      let clock = TestClock()
      let cache = LoadCache(staleTime: .seconds(3_600), clock: clock)
      let face = await makeFace(side, cache)
      switch call {
      case .refresh: await face.write(.loaded(0))
      case .loadMore: await face.writeList(.loaded(Pages(items: [0], nextCursor: 1)))
      case .load, .cachedLoad, .cachedRefresh: break
      }
      await face.observe(clock)
      let oldGate = ActorGate()
      let newGate = ActorGate()
      let old = OutsiderWork(gate: oldGate, result: 1)
      let oldPage = OutsiderPageWork(gate: oldGate)
      let key = CacheKey<Int>("superseded", call.rawValue)
      let returned = OutsiderMarks()
      let caller = Task {
        switch call {
        case .load: await face.loadAwaiting(old)
        case .cachedLoad: await face.loadCachedAwaiting(key, old)
        case .refresh: await face.refreshAwaiting(old)
        case .cachedRefresh: await face.refreshCachedAwaiting(key, old, nil)
        case .loadMore: await face.loadMoreAwaiting(oldPage, nil)
        }
        returned.mark("returned")
      }
      try await outsiderUntil("\(side): the superseded call's work runs") { oldGate.waiting == 1 }

      let newer = OutsiderWork(gate: newGate, result: 2)
      let newerCall = call == .loadMore ? await face.loadList(newer) : await face.load(newer)
      try await outsiderUntil("\(side): the newer load's work runs") { newGate.waiting == 1 }

      switch order {
      case .supersededWorkEndsFirst:
        oldGate.open()
        try await caller.value(timeLimit: outsiderHang, clock: clock)
        #expect(newGate.waiting == 1, "\(side): returned while the newer load still runs")
        #expect(await face.state() != .loaded(1), "\(side): the superseded answer is not written")
        newGate.open()
        try await newerCall.value(timeLimit: outsiderHang, clock: clock)
      case .newerEndsFirst:
        newGate.open()
        try await newerCall.value(timeLimit: outsiderHang, clock: clock)
        oldGate.open()
        try await caller.value(timeLimit: outsiderHang, clock: clock)
      }
      #expect(returned.has("returned"))
      // The superseded block ignores cancellation: once its gate is open it answers (after its caller returned,
      // possibly); its answer must never be written.
      try await outsiderUntil("\(side): the superseded block answered") {
        old.marks.has("returned") || oldPage.marks.has("returned")
      }
      // A round trip to the owner after the superseded block answered, before the final reads.
      _ = await face.state()

      if call == .loadMore {
        let newest = LoadableState<Pages<Int, Int>>.loaded(Pages(items: [2], nextCursor: nil))
        #expect(await face.listState() == newest, "\(side)")
        #expect(face.listLog.states == [.loading, newest], "\(side)")
        #expect(face.xLog.count == 0, "\(side)")
        histories[side] = face.listLog.states.map { "\($0)" }
      } else {
        #expect(await face.state() == .loaded(2), "\(side)")
        #expect(face.xLog.states == [.loading, .loaded(2)], "\(side)")
        histories[side] = face.xLog.states.map { "\($0)" }
      }
    }
    #expect(histories[.actor] == histories[.mainActor])
  }
}

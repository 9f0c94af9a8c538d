// The stories of the original Processed README, told as state histories, then the load policies (debounce,
// .joinRunning, a limiter), a screen drawn from state and activity, a shared cache, a paged feed and a state owned by
// an actor: `swift run Stories`.
//
// Each story records every state a UI would see — with `$x.observe { … }` or `model.observe(\.x) { … }` — and
// prints the history when it ends. The "network" is a few short sleeps, so the whole tour takes well under a second.
import Processed

// MARK: - A stand-in for the network

struct NetworkError: Error {}

/// Canned data behind short sleeps.
enum API {
  static func numbers(failing: Bool = false) async throws -> [Int] {
    try await Task.sleep(for: .milliseconds(10))
    if failing { throw NetworkError() }
    return [1, 2, 3]
  }

  /// One page of a paged feed: page 1 is `[1, 2]`, page 2 is `[3, 4]`, …
  static func page(_ number: Int) async throws -> [Int] {
    try await Task.sleep(for: .milliseconds(5))
    return [2 * number - 1, 2 * number]
  }

  static func save() async throws {
    try await Task.sleep(for: .milliseconds(5))
  }

  static func delete() async throws {
    try await Task.sleep(for: .milliseconds(5))
    throw NetworkError()
  }
}

/// The kinds of process an editor runs on one state.
enum Action: Equatable, Sendable {
  case save, delete
}

/// Prints a recorded history, one state per line.
func show<State>(_ history: [State], label: String = "history") {
  print("   \(label):")
  for state in history {
    print("     ", state)
  }
}

// MARK: - The stories

@main
struct Stories {
  @MainActor
  static func main() async {
    print("Processed — the README's stories, each printed as the history of states it records.")
    await basicLoad()
    await yieldingLoad()
    await cancellation()
    await reset()
    await processes()
    await timeout()
    await classForm()
    await searchAsYouType()
    await doubleTappedSave()
    await limitedDownloads()
    await feedScreen()
    await sharedProfile()
    await infiniteFeed()
    await actorConfig()
  }

  // 1. `@Loadable`: a load goes .absent → .loading → .loaded; a failing one ends in .error.
  @MainActor
  static func basicLoad() async {
    print("\n1. Loading with @Loadable")
    @Loadable var numbers: LoadableState<[Int]>
    var history = [numbers]  // the observer sees changes only, so start with the current state
    let token = $numbers.observe { history.append($0) }

    await $numbers.load { try await API.numbers() }
    await $numbers.load { try await API.numbers(failing: true) }

    token.cancel()
    show(history)
  }

  // 2. A yielding load streams several states from one load, here one `.loaded` per page.
  @MainActor
  static func yieldingLoad() async {
    print("\n2. Yielding pages from one load")
    @Loadable var feed: LoadableState<[Int]>
    var history = [feed]
    let token = $feed.observe { history.append($0) }

    await $feed.load { yield in
      var items: [Int] = []
      for number in 1...3 {
        items += try await API.page(number)
        yield(.loaded(items))
      }
    }

    token.cancel()
    show(history)
  }

  // 3. `cancel()` stops a load: the state stays as it is and the result never arrives, even from a block that
  //    ignores cancellation.
  @MainActor
  static func cancellation() async {
    print("\n3. Cancelling a slow load")
    @Loadable var numbers: LoadableState<[Int]>
    var history = [numbers]
    let token = $numbers.observe { history.append($0) }

    let slow: Task<Void, Never> = $numbers.load {
      try await Task.sleep(for: .milliseconds(200))
      return [1, 2, 3]
    }
    await Task.yield()
    $numbers.cancel()
    await slow.value
    print("   after cancel():", numbers)

    let stubborn: Task<Void, Never> = $numbers.load {
      try? await Task.sleep(for: .milliseconds(200))  // ignores cancellation, like much real network code
      print("   the stubborn block returns [4, 5, 6] anyway")
      return [4, 5, 6]
    }
    await Task.yield()
    $numbers.cancel()
    await stubborn.value
    print("   after it returned:", numbers)

    token.cancel()
    show(history)
  }

  // 4. `reset()` cancels and goes back to .absent; a block can throw `ResetLoadable()` or `CancelLoadable()` to do
  //    the same from inside.
  @MainActor
  static func reset() async {
    print("\n4. Resetting, and control errors thrown from a block")
    @Loadable var numbers: LoadableState<[Int]>
    var history = [numbers]
    let token = $numbers.observe { history.append($0) }

    await $numbers.load { try await API.numbers() }
    $numbers.reset()  // → .absent

    await $numbers.load { throw ResetLoadable() }  // .loading → .absent: e.g. the user signed out meanwhile

    await $numbers.load { yield in
      yield(.loaded([42]))  // a cached value first
      throw CancelLoadable()  // nothing newer to show: keep the state as it is
    }

    token.cancel()
    show(history)
  }

  // 5. `@Process` runs actions: a SingleProcess, then an `Action` kind that finishes or fails.
  @MainActor
  static func processes() async {
    print("\n5. Processes")
    @Process var saving
    var savingHistory = [saving]
    let savingToken = $saving.observe { savingHistory.append($0) }

    await $saving.run { try await API.save() }

    savingToken.cancel()
    show(savingHistory, label: "saving (a SingleProcessState)")

    @Process var action: ProcessState<Action>
    var actionHistory = [action]
    let actionToken = $action.observe { actionHistory.append($0) }

    await $action.run(.save) { try await API.save() }
    await $action.run(.delete) { try await API.delete() }
    print("   hasFailed(.delete):", action.hasFailed(.delete), "— error:", action.error.map { "\($0)" } ?? "none")

    actionToken.cancel()
    show(actionHistory, label: "action (a ProcessState<Action>)")
  }

  // 6. Interrupts fire after accumulating delays while a load runs; throwing `TimeoutError()` from one ends it.
  @MainActor
  static func timeout() async {
    print("\n6. A timeout through interrupts")
    @Loadable var numbers: LoadableState<[Int]>
    var history = [numbers]
    let token = $numbers.observe { history.append($0) }

    await $numbers.load(interrupts: [.milliseconds(50), .milliseconds(100)]) {
      try await Task.sleep(for: .seconds(5))  // a server that never answers in time
      return [1, 2, 3]
    } onInterrupt: { accumulatedDelay in
      print("   interrupt after", accumulatedDelay)
      if accumulatedDelay >= .milliseconds(150) {
        throw TimeoutError()
      }
      // The first interrupt would show a "still loading…" hint.
    }

    token.cancel()
    show(history)
  }

  // 7. The class form: a view model loads and runs by key path, and observers follow its properties.
  @MainActor
  static func classForm() async {
    print("\n7. A view model with LoadableSupport and ProcessSupport")
    let model = ViewModel()
    var numbersHistory = [model.numbers]
    var processHistory = [model.process]
    let numbersToken = model.observe(\.numbers) { numbersHistory.append($0) }
    let processToken = model.observe(\.process) { processHistory.append($0) }

    await model.refresh()
    await model.save()

    numbersToken.cancel()
    processToken.cancel()
    show(numbersHistory, label: "numbers")
    show(processHistory, label: "process")
  }
}

extension Stories {
  // 8. Debounce: a search field loads as the user types, once per pause, with no .loading flicker per keystroke.
  @MainActor
  static func searchAsYouType() async {
    print("\n8. Search as you type (debounce)")
    @Loadable(options: LoadOptions(debounce: .trailing(.milliseconds(80)))) var results: LoadableState<[String]>
    var history = [results]
    var searches: [String] = []
    let token = $results.observe { history.append($0) }

    var last: Task<Void, Never>?
    for query in ["s", "sw", "swi", "swif", "swift"] {
      print("   typed \"\(query)\"")
      last = $results.load {
        searches.append(query)
        try await Task.sleep(for: .milliseconds(10))
        return ["\(query) 6.2", "\(query) testing"]
      }
      try? await Task.sleep(for: .milliseconds(20))  // the next keystroke comes before the pause ends
    }
    await last?.value

    token.cancel()
    print("   searches run:", searches)
    show(history)
  }

  // 9. Join a running load: a double-tapped Save saves once; both taps return when it is done.
  @MainActor
  static func doubleTappedSave() async {
    print("\n9. A double-tapped Save (.joinRunning)")
    @Process(options: LoadOptions(overlap: .joinRunning)) var saving
    var history = [saving]
    var saves = 0
    let token = $saving.observe { history.append($0) }

    let first: Task<Void, Never> = $saving.run {
      saves += 1
      try await API.save()
    }
    let second: Task<Void, Never> = $saving.run {  // joins the first: starts nothing
      saves += 1
      try await API.save()
    }
    await first.value
    await second.value

    token.cancel()
    print("   saves:", saves)
    show(history)
  }

  // 10. A limiter shared by many states: 8 thumbnails, at most 3 downloads at once, the rest shown as .loading.
  @MainActor
  static func limitedDownloads() async {
    print("\n10. Eight thumbnails, three downloads at a time (LoadLimiter)")
    let limiter = LoadLimiter(maxConcurrent: 3)
    let options = LoadOptions(limiter: limiter)
    let thumbnails = (0..<8).map { _ in Loadable<Int>() }
    var downloading = 0
    var mostAtOnce = 0

    let tasks = thumbnails.enumerated().map { index, thumbnail -> Task<Void, Never> in
      thumbnail.projectedValue.load(options: options) {
        downloading += 1
        mostAtOnce = max(mostAtOnce, downloading)
        defer { downloading -= 1 }
        try await Task.sleep(for: .milliseconds(5))
        return index
      }
    }
    print("   right after the calls:", thumbnails.map { $0.wrappedValue.isLoading ? "loading" : "?" })
    for task in tasks { await task.value }
    print("   at most \(mostAtOnce) at once; now running \(limiter.running), waiting \(limiter.waiting)")
    print("   thumbnails:", thumbnails.map { $0.wrappedValue.data ?? -1 })
  }
}

extension Stories {
  // 11. State and activity: a feed screen drawn in the terminal from the state (what to show) and the activity (what
  // the load is doing): a progress bar while loading, "retrying … (attempt 2)" while it waits to retry, and the feed
  // kept on screen during a refresh that fails.
  @MainActor
  static func feedScreen() async {
    print("\n11. A feed screen: state, activity, progress, retry and a refresh that fails")
    let retry = RetryPolicy.constant(.milliseconds(20), maxRetries: 2)
    @Loadable(options: LoadOptions(retry: retry)) var feed: LoadableState<[String]>
    var screen: [String] = []
    func draw() {
      let activity = $feed.activity
      var line: String
      switch activity.phase {
      case .idle: line = "idle"
      case .debouncing: line = "…"
      case .waiting: line = "queued"
      case .running(let attempt):
        let fraction = activity.progress?.fraction ?? 0
        let filled = Int(fraction * 10)
        line = "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 10 - filled) + "]"
        if let message = activity.progress?.message { line += " " + message }
        if attempt > 1 { line += " (attempt \(attempt))" }
      case .retrying(let attempt):
        line = "retrying in 20 ms (attempt \(attempt))"
      case .paused:
        line = "offline"
      }
      let content = $feed.lastValue.map { "\($0.count) posts" } ?? "no posts yet"
      let error = activity.lastError.map { " — last error: \($0)" } ?? ""
      let frame = "   | \(content) | \(line)\(error)"
      if screen.last != frame { screen.append(frame) }
    }
    let stateToken = $feed.observe { _ in draw() }
    let activityToken = $feed.observeActivity { _ in draw() }

    var attempts = 0
    await $feed.load {
      attempts += 1
      LoadProgress.report(fraction: 0, message: "connecting")
      try await Task.sleep(for: .milliseconds(5))
      if attempts == 1 { throw NetworkError() }  // the first attempt fails: retried
      LoadProgress.report(fraction: 0.5, message: "page 1 of 2")
      try await Task.sleep(for: .milliseconds(5))
      LoadProgress.report(fraction: 1, message: "page 2 of 2")
      return ["hello", "world", "again"]
    }
    await $feed.refresh(options: .default) {  // pull to refresh, and the server is down
      try await Task.sleep(for: .milliseconds(5))
      throw NetworkError()
    }

    stateToken.cancel()
    activityToken.cancel()
    for frame in screen { print(frame) }
  }
}

/// The README's view model, without SwiftUI: `observers` takes the place of `@Published`.
@MainActor
final class ViewModel: ObservableModel, LoadableSupport, ProcessSupport {
  enum ProcessKind: Equatable, Sendable {
    case saving, deleting
  }

  let observers = ObserverRegistry()
  var numbers: LoadableState<[Int]> = .absent
  var process: ProcessState<ProcessKind> = .idle

  func refresh() async {
    await load(\.numbers) {
      try await fetchNumbers()  // no `self.` needed
    }
  }

  func save() async {
    await run(\.process, as: .saving) {
      try await API.save()
    }
  }

  func fetchNumbers() async throws -> [Int] {
    try await API.numbers()
  }
}

// MARK: - Readable process kinds

// So that histories print `.save` rather than `Stories.Action.save`.
extension Action: CustomDebugStringConvertible {
  var debugDescription: String {
    switch self {
    case .save: ".save"
    case .delete: ".delete"
    }
  }
}

extension ViewModel.ProcessKind: CustomDebugStringConvertible {
  var debugDescription: String {
    switch self {
    case .saving: ".saving"
    case .deleting: ".deleting"
    }
  }
}

// Processed against hand-written code and its peers. Run `Benchmarks/run.sh`; see Documentation/Performance.md.
import HandWritten
import Observation
import OpenCombine
import Processed

@main
struct ProcessedBenchmarks {
  @MainActor
  static func main() async {
    let arguments = CommandLine.arguments
    if let index = arguments.firstIndex(of: "--rounds"), index + 1 < arguments.count,
      let rounds = Int(arguments[index + 1])
    {
      Bench.rounds = rounds
    }
    // `--only NAME`: one group of rows (write, observe, yield, cycles, backtoback, policies, memory,
    // cache, isolated), for iterating.
    let only = arguments.firstIndex(of: "--only").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }
    func runs(_ group: String) -> Bool { only == nil || only == group }
    Bench.interposerLoaded = (getenv("LD_PRELOAD") != nil) || (getenv("DYLD_INSERT_LIBRARIES") != nil)
    print("Processed benchmarks — release build, \(Bench.rounds) rounds, median per operation")
    print("allocation counts: \(Bench.interposerLoaded ? "malloc interposer loaded" : "n/a (run through run.sh)")\n")

    if runs("write") { for observers in [0, 1, 10, 100] { await writeAndNotify(observers: observers) } }
    if runs("observe") { await observeAndCancel() }
    if runs("yield") { await yieldingKeyPathLoad() }
    if runs("cycles") { await loadCycles() }
    if runs("backtoback") { await backToBackLoads() }
    if runs("policies") { await policies() }
    if runs("memory") { memory() }
    if runs("cache") { await cacheBenchmarks() }
    if runs("isolated") {
      await isolatedLoadCycles()
      await isolatedBareCycles()
    }
    if runs("storage") { await storageBenchmarks() }
    Bench.printMarkdown()
  }

  // MARK: Write + notify

  /// Writes with `count` observers, against the floor: a `Mutex` holding a `LoadableState<Int>` and an array of
  /// `@Sendable` handlers, copied under the lock and called after unlocking (`HandStateRegistry`). Every side's
  /// handler has the same body.
  @MainActor
  static func writeAndNotify(observers count: Int) async {
    let writes = 20_000
    let sink = Sink()
    var intSink = 0

    let hand = HandStateRegistry()
    for _ in 0..<count { _ = hand.add { sink.take($0) } }

    let model = ProcessedModel()
    var tokens: [ObservationToken] = []
    for _ in 0..<count { tokens.append(model.observe(\.state) { sink.take($0) }) }
    for _ in 0..<count { tokens.append(model.observe(\.value) { intSink &+= $0 }) }

    let loadable = Loadable<Int>()
    for _ in 0..<count { tokens.append(loadable.projectedValue.observe { sink.take($0) }) }

    let combine = CombineModel()
    var cancellables: [AnyCancellable] = []
    for _ in 0..<count { cancellables.append(combine.$value.sink { intSink &+= $0 }) }

    let observation = ObservationModel()
    let counter = Counter()

    let bridged = BridgedModel()
    for _ in 0..<count { tokens.append(bridged.observe(\.value) { intSink &+= $0 }) }

    let results = await measureSideBySide(
      operations: writes,
      [
        { for i in 0..<writes { hand.set(.loaded(i)) } },
        { for i in 0..<writes { model.state = .loaded(i) } },
        { for i in 0..<writes { loadable.wrappedValue = .loaded(i) } },
        { for i in 0..<writes { model.value = i } },
        { for i in 0..<writes { combine.value = i } },
        {
          for i in 0..<writes {
            for _ in 0..<count {
              withObservationTracking {
                _ = observation.value
              } onChange: {
                counter.count &+= 1
              }
            }
            observation.value = i
          }
        },
        { for i in 0..<writes { bridged.value = i } },
      ])
    let (handResult, observed, loadableWrite, observedInt, combineResult, observationResult, bridgedWrite) =
      (results[0], results[1], results[2], results[3], results[4], results[5], results[6])

    let limit = count == 0 ? 2.0 : count == 1 ? 1.3 : 1.1
    let floor = "Mutex + closures (LoadableState<Int>)"
    Bench.record(
      "write + notify", "@Loadable<Int> write, \(count) observers", ours: loadableWrite, against: floor, handResult,
      target: "≤ \(fixed(limit, 1))×", maxRatio: limit)
    Bench.record(
      "write + notify", "@Observed LoadableState<Int> write, \(count) observers", ours: observed, against: floor,
      handResult, target: "≤ \(fixed(limit, 1))×", maxRatio: limit)
    Bench.record(
      "write + notify", "@Observed Int write, \(count) observers", ours: observedInt, against: "OpenCombine @Published",
      combineResult, target: count >= 10 ? "≥ 4× faster" : "", minSpeedup: count >= 10 ? 4 : nil)
    Bench.record(
      "write + notify", "@Observed Int write, \(count) observers", ours: observedInt,
      against: "withObservationTracking", observationResult)
    Bench.record(
      "write + notify", "@Observed Int write, Observable model (bridge), \(count) observers", ours: bridgedWrite,
      against: "@Observed Int write", observedInt)
    withExtendedLifetime((tokens, cancellables, sink, intSink)) {}
  }

  // MARK: Observe + cancel

  @MainActor
  static func observeAndCancel() async {
    let operations = 20_000
    let model = ProcessedModel()
    let controller = Loadable<Int>().projectedValue
    let hand = HandStateRegistry()
    let sink = Sink()
    let results = await measureSideBySide(
      operations: operations,
      [
        { for _ in 0..<operations { model.observe(\.value) { _ in }.cancel() } },
        { for _ in 0..<operations { controller.observe { _ in }.cancel() } },
        { for _ in 0..<operations { hand.remove(hand.add { _ in }) } },
        // A state's whole life with one observer, as a screen's model has it: made, observed by a closure that
        // captures something, its observer cancelled, released. The first observer makes the state's slot.
        // Each model is kept until the next is made, so that it lives on the heap as a screen's does.
        {
          var last: ScreenModel?
          for _ in 0..<operations {
            let model = ScreenModel()
            model.$feed.observe { sink.take($0) }.cancel()
            last = model
          }
          withExtendedLifetime(last) {}
        },
        {
          var last: HandScreenModel?
          for _ in 0..<operations {
            let model = HandScreenModel()
            model.feed.remove(model.feed.add { sink.take($0) })
            last = model
          }
          withExtendedLifetime(last) {}
        },
      ])
    let (ours, oursController, handResult) = (results[0], results[1], results[2])
    let floor = "Mutex + closures (LoadableState<Int>)"
    Bench.record("observe + cancel", "model.observe(\\.value) + cancel", ours: ours, against: floor, handResult)
    Bench.record("observe + cancel", "$state.observe { }.cancel()", ours: oursController, against: floor, handResult)
    Bench.record(
      "observe + cancel", "a new model's @Loadable: made, observed, cancelled, released", ours: results[3],
      against: "a new model's Mutex + closures registry, the same", results[4])
    Bench.absolute.append(
      ("observe + cancel (model key path)", "\(fixed(ours.nanoseconds, 0)) ns", "< 250 ns", ours.nanoseconds < 250))
    Bench.absolute.append(
      (
        "observe + cancel ($state.observe { }.cancel())", "\(fixed(oursController.nanoseconds, 0)) ns", "≤ 150 ns",
        oursController.nanoseconds <= 150
      ))
  }

  // MARK: Key-path yielding load

  /// One `model.load(\.x) { yield in … }` yielding many states to one observer, per change, against a plain
  /// property whose `didSet` notifies the write + notify floor: with the benchmarks' observer (it sums the values),
  /// and with one that does nothing (the least the floor can cost, so the highest ratio).
  @MainActor
  static func yieldingKeyPathLoad() async {
    await yieldingKeyPathLoad(observerName: "1 observer") { sink in { sink.take($0) } }
    await yieldingKeyPathLoad(observerName: "1 observer that does nothing") { _ in { _ in } }
  }

  @MainActor
  static func yieldingKeyPathLoad(
    observerName: String, observer: (Sink) -> @Sendable (LoadableState<Int>) -> Void
  ) async {
    let changes = 20_000
    let sink = Sink()
    let model = ProcessedModel()
    let token = model.observe(\.numbers, observer(sink))
    let hand = HandDidSetModel()
    _ = hand.observers.add(observer(sink))
    let results = await measureSideBySide(
      operations: changes,
      [
        { for i in 0..<changes { hand.state = .loaded(i) } },
        {
          await model.load(\.numbers) { yield in
            for i in 0..<changes { yield(.loaded(i)) }
          }
        },
      ])
    Bench.record(
      "key-path yielding load", "model.load(\\.x) { yield in … }, \(observerName), per change", ours: results[1],
      against: "didSet + Mutex + closures", results[0], target: "≤ 1.5×", maxRatio: 1.5)
    withExtendedLifetime((token, sink)) {}
  }

  // MARK: Load cycles

  @MainActor
  static func loadCycles() async {
    let loads = 2_000
    let hand = HandLoader()
    _ = hand.observers.add { _ in }
    let controller = Loadable<Int>().projectedValue
    let token = controller.observe { _ in }
    let model = ProcessedModel()
    let modelToken = model.observe(\.numbers) { _ in }

    let results = await measureSideBySide(
      operations: loads,
      [
        { for i in 0..<loads { await hand.load { i }.value } },
        {
          for i in 0..<loads {
            let task: Task<Void, Never> = controller.load { i }
            await task.value
          }
        },
        { for i in 0..<loads { await controller.load { i } } },
        {
          for i in 0..<loads {
            let task: Task<Void, Never> = model.load(\.numbers) { i }
            await task.value
          }
        },
        { for i in 0..<loads { await model.load(\.numbers) { i } } },
      ])
    let (handResult, taskForm, asyncForm, keyPathTask, keyPathAsync) =
      (results[0], results[1], results[2], results[3], results[4])

    for (name, result) in [
      ("load cycle, Task form", taskForm), ("load cycle, async form", asyncForm),
      ("key-path load cycle, Task form", keyPathTask), ("key-path load cycle, async form", keyPathAsync),
    ] {
      Bench.record(
        "load cycle", name, ours: result, against: "hand-written Task + generation", handResult,
        target: "≤ 1.3×", maxRatio: 1.3)
    }
    withExtendedLifetime((token, modelToken)) {}
  }

  @MainActor
  static func backToBackLoads() async {
    let loads = 10_000
    let hand = HandLoader()
    let controller = Loadable<Int>().projectedValue
    let model = ProcessedModel()
    let results = await measureSideBySide(
      operations: loads, rounds: max(5, Bench.rounds / 2),
      [
        {
          var last: Task<Void, Never>?
          for i in 0..<loads { last = hand.load { i } }
          await last?.value
        },
        {
          var last: Task<Void, Never>?
          for i in 0..<loads { last = controller.load { i } }
          await last?.value
        },
        {
          var last: Task<Void, Never>?
          for i in 0..<loads { last = model.load(\.numbers) { i } }
          await last?.value
        },
      ])
    let (handResult, ours, keyPath) = (results[0], results[1], results[2])
    Bench.record(
      "10,000 loads back to back", "$state.load ×10,000, last awaited", ours: ours,
      against: "hand-written Task + generation", handResult, target: "≤ 1.3×", maxRatio: 1.3)
    Bench.record(
      "10,000 loads back to back", "load(\\.x) ×10,000, last awaited", ours: keyPath,
      against: "hand-written Task + generation", handResult, target: "≤ 1.3×", maxRatio: 1.3)
  }

  // MARK: Memory

  @MainActor
  static func memory() {
    if let perState = heapBytesPerObject({ Loadable<Int>() }) {
      Bench.absolute.append(("heap bytes per @Loadable state", fixed(perState, 0), "≤ 256", perState <= 256))
    }
    if let perProcess = heapBytesPerObject({ Processed.Process<SingleProcess>() }) {
      Bench.absolute.append(("heap bytes per @Process state", fixed(perProcess, 0), "≤ 256", perProcess <= 256))
    }
    // The first and the second observer of a fresh `Loadable<Int>`: everything registering them keeps allocated
    // (the token, the observer's storage, and for the first one whatever the state needs to hold observers).
    let states = (0..<10_000).map { _ in Loadable<Int>() }
    var firstTokens: [ObservationToken] = []
    firstTokens.reserveCapacity(2 * states.count)
    if let first = heapBytesPerCall(states.count, { firstTokens.append(states[$0].projectedValue.observe { _ in }) }) {
      Bench.absolute.append(
        ("heap bytes, first observer of a Loadable<Int>", first.description, "≤ 200", first.bytes <= 200))
    }
    if let second = heapBytesPerCall(states.count, { firstTokens.append(states[$0].projectedValue.observe { _ in }) }) {
      Bench.absolute.append(
        ("heap bytes, second observer of a Loadable<Int>", second.description, "≤ 128", second.bytes <= 128))
    }
    withExtendedLifetime((states, firstTokens)) {}
    let controller = Loadable<Int>().projectedValue
    controller.observe { _ in }.cancel()  // the state holds observers before measuring
    if let perObserver = heapBytesPerObject({ controller.observe { _ in } }) {
      Bench.absolute.append(("heap bytes per observer ($state)", fixed(perObserver, 0), "≤ 160", perObserver <= 160))
    }
    let model = ProcessedModel()
    model.observe(\.value) { _ in }.cancel()
    if let perModelObserver = heapBytesPerObject({ model.observe(\.value) { _ in } }) {
      Bench.absolute.append(
        ("heap bytes per observer (model key path)", fixed(perModelObserver, 0), "≤ 160", perModelObserver <= 160))
    }
    let hand = HandStateRegistry()
    if let perHandObserver = heapBytesPerObject({ hand.add { _ in } }) {
      Bench.absolute.append(("heap bytes per observer (Mutex + array baseline)", fixed(perHandObserver, 0), "", nil))
    }
  }
}

extension Bench {
  /// The results as Markdown tables, for Documentation/Performance.md.
  static func printMarkdown() {
    print("\n| group | Processed | baseline | Processed ns | baseline ns | ratio | allocs (P/b) | target |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | --- |")
    for row in rows {
      let ratio = row.ours.ratio(to: row.baseline)
      let allocs =
        "\(row.ours.allocations.map { fixed($0, 1) } ?? "n/a") / \(row.baseline.allocations.map { fixed($0, 1) } ?? "n/a")"
      let verdict = row.meetsTarget.map { $0 ? " ✅" : " ❌" } ?? ""
      print(
        "| \(row.group) | \(row.name) | \(row.baselineName) | \(fixed(row.ours.nanoseconds, 1)) | "
          + "\(fixed(row.baseline.nanoseconds, 1)) | \(fixed(ratio, 2)) | \(allocs) | \(row.target)\(verdict) |")
    }
    print("\n| figure | value | target |")
    print("| --- | ---: | --- |")
    for figure in absolute {
      let verdict = figure.meets.map { $0 ? " ✅" : " ❌" } ?? ""
      print("| \(figure.name) | \(figure.value) | \(figure.target)\(verdict) |")
    }
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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
    Bench.interposerLoaded = (getenv("LD_PRELOAD") != nil) || (getenv("DYLD_INSERT_LIBRARIES") != nil)
    print("Processed benchmarks — release build, \(Bench.rounds) rounds, median per operation")
    print("allocation counts: \(Bench.interposerLoaded ? "malloc interposer loaded" : "n/a (run through run.sh)")\n")

    for observers in [0, 1, 10, 100] { await writeAndNotify(observers: observers) }
    await observeAndCancel()
    await loadCycles()
    await backToBackLoads()
    await policies()
    memory()
    Bench.printMarkdown()
  }

  // MARK: Write + notify

  @MainActor
  static func writeAndNotify(observers count: Int) async {
    let writes = 20_000
    var sink = 0

    let hand = HandRegistry()
    for _ in 0..<count { _ = hand.add { sink &+= $0 } }

    let model = ProcessedModel()
    var tokens: [ObservationToken] = []
    for _ in 0..<count { tokens.append(model.observe(\.value) { sink &+= $0 }) }

    let loadable = Loadable<Int>()
    for _ in 0..<count { tokens.append(loadable.projectedValue.observe { if case .loaded(let v) = $0 { sink &+= v } }) }

    let combine = CombineModel()
    var cancellables: [AnyCancellable] = []
    for _ in 0..<count { cancellables.append(combine.$value.sink { sink &+= $0 }) }

    let observation = ObservationModel()
    let counter = Counter()

    let bridged = BridgedModel()
    for _ in 0..<count { tokens.append(bridged.observe(\.value) { sink &+= $0 }) }

    let results = await measureSideBySide(
      operations: writes,
      [
        { for i in 0..<writes { hand.set(i) } },
        { for i in 0..<writes { model.value = i } },
        { for i in 0..<writes { loadable.wrappedValue = .loaded(i) } },
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
    let (handResult, observed, loadableWrite, combineResult, observationResult, bridgedWrite) =
      (results[0], results[1], results[2], results[3], results[4], results[5])

    let limit = count == 0 ? 2.0 : 1.5
    Bench.record(
      "write + notify", "@Observed write, \(count) observers", ours: observed, against: "Mutex + array registry",
      handResult, target: "≤ \(fixed(limit, 1))×", maxRatio: limit)
    Bench.record(
      "write + notify", "@Loadable write, \(count) observers", ours: loadableWrite, against: "Mutex + array registry",
      handResult, target: "≤ \(fixed(limit, 1))×", maxRatio: limit)
    Bench.record(
      "write + notify", "@Observed write, \(count) observers", ours: observed, against: "OpenCombine @Published",
      combineResult, target: count >= 10 ? "≥ 4× faster" : "", minSpeedup: count >= 10 ? 4 : nil)
    Bench.record(
      "write + notify", "@Observed write, \(count) observers", ours: observed,
      against: "withObservationTracking", observationResult)
    Bench.record(
      "write + notify", "@Observed write, Observable model (bridge), \(count) observers", ours: bridgedWrite,
      against: "Mutex + array registry", handResult)
    withExtendedLifetime((tokens, cancellables, sink)) {}
  }

  // MARK: Observe + cancel

  @MainActor
  static func observeAndCancel() async {
    let operations = 20_000
    let model = ProcessedModel()
    let controller = Loadable<Int>().projectedValue
    let hand = HandRegistry()
    let results = await measureSideBySide(
      operations: operations,
      [
        { for _ in 0..<operations { model.observe(\.value) { _ in }.cancel() } },
        { for _ in 0..<operations { controller.observe { _ in }.cancel() } },
        { for _ in 0..<operations { hand.remove(hand.add { _ in }) } },
      ])
    let (ours, oursController, handResult) = (results[0], results[1], results[2])
    Bench.record(
      "observe + cancel", "model.observe(\\.value) + cancel", ours: ours, against: "Mutex + array registry",
      handResult)
    Bench.record(
      "observe + cancel", "$state.observe + cancel", ours: oursController, against: "Mutex + array registry",
      handResult)
    Bench.absolute.append(
      ("observe + cancel (model key path)", "\(fixed(ours.nanoseconds, 0)) ns", "< 250 ns", ours.nanoseconds < 250))
    Bench.absolute.append(
      (
        "observe + cancel ($state)", "\(fixed(oursController.nanoseconds, 0)) ns", "< 250 ns",
        oursController.nanoseconds < 250
      ))
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
    let controller = Loadable<Int>().projectedValue
    controller.observe { _ in }.cancel()  // the state's own registry exists before measuring
    if let perObserver = heapBytesPerObject({ controller.observe { _ in } }) {
      Bench.absolute.append(("heap bytes per observer ($state)", fixed(perObserver, 0), "≤ 160", perObserver <= 160))
    }
    let model = ProcessedModel()
    model.observe(\.value) { _ in }.cancel()
    if let perModelObserver = heapBytesPerObject({ model.observe(\.value) { _ in } }) {
      Bench.absolute.append(
        ("heap bytes per observer (model key path)", fixed(perModelObserver, 0), "≤ 160", perModelObserver <= 160))
    }
    let hand = HandRegistry()
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

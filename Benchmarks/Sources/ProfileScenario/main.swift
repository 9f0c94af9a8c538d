// One scenario in a loop, for `perf record` and quick timing (it prints nanoseconds per operation).
// Usage: ProfileScenario observed|loadable|hand|observe|cancel|handdidset|handdidsetempty [count] [observers]
//        ProfileScenario load|keypathload|handload|yieldload|yieldsinkload|yieldobserved|yieldnoobs|yieldplain [count] [rounds]
//        ProfileScenario yieldvs [count] [rounds]   (the yielding load and its floor, alternated)
//        ProfileScenario cycle|keypathcycle|plainkeypathcycle|processcycle|handcycle [count] [rounds]   (each load awaited before the next)
//        ProfileScenario cachehit|handcachehit|cachemiss|cachemissasync|setremove [count]   (a fresh hit, its floor, a miss
//                        cycle, a key set and removed)
//        ProfileScenario backtoback|handbacktoback [count]   (the benchmark's back-to-back row: rounds of 10,000 loads)
//        ProfileScenario isocycle|isotaskcycle|handisocycle|handisotaskcycle [count] [rounds]   (actor-owned load cycles)
//        ProfileScenario isobarecycle|isobaretaskcycle|handbarecycle [count]   (the same with no observer; the bare actor)
//        ProfileScenario valuemiss|handvaluemiss [count]   (a `value(for:)` miss cycle from a detached task; the actor singleflight)
//        ProfileScenario valuehit [count]   (a fresh `value(for:)` hit from a detached task)
//        ProfileScenario cancelsink|handcancelsink|freshonly|handfreshonly|cancelfresh|handcancelfresh|firstobserver [count]
//                        (observe + cancel with a capturing observer; a state made and released; the same with one
//                        observer; a state's first and second observers)
import Foundation
import HandWritten
import Processed

@MainActor
final class Model: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  @Observed var value = 0
  @Observed var state: LoadableState<Int> = .absent
  var numbers: LoadableState<Int> = .absent
}

@MainActor
final class PlainModel: LoadableSupport, ProcessSupport {
  var numbers: LoadableState<Int> = .absent
  var saving: SingleProcessState = .idle
}

/// An actor that owns an `@IsolatedLoadable` state with one observer, for the actor-owned load cycles.
actor IsolatedOwner {
  @IsolatedLoadable var value: LoadableState<Int> = .absent
  private var token: ObservationToken?

  func observe(into sink: Sink) {
    token = $value.observe { sink.take($0) }
  }

  func cycles(_ loads: Int, taskForm: Bool) async {
    if taskForm {
      for i in 0..<loads {
        let task: Task<Void, Never> = $value.load { i }
        await task.value
      }
    } else {
      for i in 0..<loads { await $value.load { i } }
    }
  }
}

extension HandActorLoader {
  func cycles(_ loads: Int, taskForm: Bool) async {
    if taskForm {
      for i in 0..<loads { await start { i }.value }
    } else {
      for i in 0..<loads { await load { i } }
    }
  }
}

let arguments = Array(CommandLine.arguments.dropFirst())
let scenario = arguments.first ?? "loadable"
let count = arguments.count > 1 ? Int(arguments[1]) ?? 2_000_000 : 2_000_000
let observerCount = arguments.count > 2 ? Int(arguments[2]) ?? 1 : 1
let clock = ContinuousClock()
let start = clock.now
var total = 0
await MainActor.run {
  let sink = Sink()
  var tokens: [ObservationToken] = []
  switch scenario {
  case "observed":
    let model = Model()
    for _ in 0..<observerCount { tokens.append(model.observe(\.state) { sink.take($0) }) }
    for i in 0..<count { model.state = .loaded(i) }
  case "loadable":
    let loadable = Loadable<Int>()
    for _ in 0..<observerCount { tokens.append(loadable.projectedValue.observe { sink.take($0) }) }
    for i in 0..<count { loadable.wrappedValue = .loaded(i) }
  case "hand":
    let hand = HandStateRegistry()
    for _ in 0..<observerCount { _ = hand.add { sink.take($0) } }
    for i in 0..<count { hand.set(.loaded(i)) }
  case "handdidset":
    let hand = HandDidSetModel()
    for _ in 0..<observerCount { _ = hand.observers.add { sink.take($0) } }
    for i in 0..<count { hand.state = .loaded(i) }
  case "handdidsetempty":
    // The `didSet` floor with observers that do nothing (compare with `yieldload`).
    let hand = HandDidSetModel()
    for _ in 0..<observerCount { _ = hand.observers.add { _ in } }
    for i in 0..<count { hand.state = .loaded(i) }
  case "observe":
    let model = Model()
    for _ in 0..<count { model.observe(\.value) { _ in }.cancel() }
  case "cancel":
    let controller = Loadable<Int>().projectedValue
    for _ in 0..<count { controller.observe { _ in }.cancel() }
  case "cancelsink":
    let controller = Loadable<Int>().projectedValue
    for _ in 0..<count { controller.observe { sink.take($0) }.cancel() }
  case "cancelfresh":
    for _ in 0..<count {
      let controller = Loadable<Int>().projectedValue
      controller.observe { sink.take($0) }.cancel()
    }
  case "freshonly":
    for i in 0..<count {
      let controller = Loadable<Int>().projectedValue
      if controller.state.isLoading { total &+= i }
    }
  case "firstobserver":
    // A state observed once and its observer cancelled, then a second observe + cancel on the same state: the
    // second pair's cost is `cancelsink`'s; the first pays for the observer slot.
    for _ in 0..<count {
      let controller = Loadable<Int>().projectedValue
      controller.observe { sink.take($0) }.cancel()
      controller.observe { sink.take($0) }.cancel()
    }
  case "handcancelfresh":
    for _ in 0..<count {
      let hand = HandStateRegistry()
      hand.remove(hand.add { sink.take($0) })
    }
  case "handfreshonly":
    for i in 0..<count {
      let hand = HandStateRegistry()
      if hand.value.isLoading { total &+= i }
    }
  case "handcancelsink":
    let hand = HandStateRegistry()
    for _ in 0..<count { hand.remove(hand.add { sink.take($0) }) }
  default:
    break
  }
  withExtendedLifetime(tokens) {}
  total = sink.total
}
/// Loads issued back to back on the main actor, the last one awaited.
@MainActor
func backToBack(_ scenario: String) async {
  var last: Task<Void, Never>?
  switch scenario {
  case "load":
    let controller = Loadable<Int>().projectedValue
    for i in 0..<count { last = controller.load { i } }
  case "keypathload":
    let model = Model()
    for i in 0..<count { last = model.load(\.numbers) { i } }
  case "handload":
    let hand = HandLoader()
    for i in 0..<count { last = hand.load { i } }
  case "cycle":
    let controller = Loadable<Int>().projectedValue
    let token = controller.observe { _ in }
    for i in 0..<count {
      let task: Task<Void, Never> = controller.load { i }
      await task.value
    }
    withExtendedLifetime(token) {}
  case "keypathcycle":
    let model = Model()
    let token = model.observe(\.numbers) { _ in }
    for i in 0..<count {
      let task: Task<Void, Never> = model.load(\.numbers) { i }
      await task.value
    }
    withExtendedLifetime(token) {}
  case "plainkeypathcycle":
    let model = PlainModel()
    for i in 0..<count {
      let task: Task<Void, Never> = model.load(\.numbers) { i }
      await task.value
    }
  case "processcycle":
    let model = PlainModel()
    for _ in 0..<count {
      let task: Task<Void, Never> = model.run(\.saving) {}
      await task.value
    }
  case "cachehit":
    let cache = LoadCache(staleTime: .seconds(3600))
    cache.set(7, for: CacheKey<Int>("k", 0))
    let controller = Loadable<Int>().projectedValue
    let token = controller.observe { _ in }
    for i in 0..<count {
      let task: Task<Void, Never> = controller.load(CacheKey<Int>("k", 0), in: cache) { i }
      await task.value
    }
    withExtendedLifetime(token) {}
  case "handcachehit":
    let cache = HandSharedCache(staleTime: .seconds(3600))
    cache.set(7, for: HandCacheKey("k", 0))
    let state = HandSharedState()
    _ = state.observers.add { _ in }
    for _ in 0..<count { _ = cache.load(state, key: HandCacheKey("k", 0)) }
  case "backtoback", "handbacktoback":
    // The benchmark's back-to-back row: rounds of 10,000 loads, the last one awaited.
    let controller = Loadable<Int>().projectedValue
    let hand = HandLoader()
    for _ in 0..<max(1, count / 10_000) {
      var last: Task<Void, Never>?
      for i in 0..<10_000 { last = scenario == "backtoback" ? controller.load { i } : hand.load { i } }
      await last?.value
    }
  case "setremove":
    // An entry made and removed: the key index, the entry's creation and destruction.
    let cache = LoadCache()
    for i in 0..<count {
      let key = CacheKey<Int>("m", 0)
      cache.set(i, for: key)
      cache.remove(key)
    }
  case "cachemiss", "cachemissasync":
    let cache = LoadCache()
    let controller = Loadable<Int>().projectedValue
    let token = controller.observe { _ in }
    for i in 0..<count {
      let key = CacheKey<Int>("m", 0)
      cache.remove(key)
      if scenario == "cachemissasync" {
        await controller.load(key, in: cache) { i }
      } else {
        let task: Task<Void, Never> = controller.load(key, in: cache) { i }
        await task.value
      }
    }
    withExtendedLifetime(token) {}
  case "isocycle", "isotaskcycle":
    let sink = Sink()
    let owner = IsolatedOwner()
    await owner.observe(into: sink)
    await owner.cycles(count, taskForm: scenario == "isotaskcycle")
  case "isobarecycle", "isobaretaskcycle":
    // No observer (the benchmark's bare rows).
    let owner = IsolatedOwner()
    await owner.cycles(count, taskForm: scenario == "isobaretaskcycle")
  case "handbarecycle":
    await HandBareActorLoader().cycles(count)
  case "valuehit":
    // The benchmark's `value(for:)` fresh hit, from a detached task: one key, set beforehand.
    let cache = LoadCache(staleTime: .seconds(3600))
    cache.set(7, for: CacheKey<Int>("k", 0))
    let sum = try! await Task.detached {
      var sum = 0
      for _ in 0..<count { sum &+= try await cache.value(for: CacheKey<Int>("k", 0)) { 0 } }
      return sum
    }.value
    precondition(sum == 7 * count, "not fresh hits")
  case "valuemiss", "handvaluemiss":
    // The benchmark's `value(for:)` miss cycle, from a detached task: a key never asked for before on every call.
    let cache = LoadCache(staleTime: .zero, gcTime: .zero)
    let hand = HandSingleflight()
    let sum = try! await Task.detached {
      var sum = 0
      for i in 0..<count {
        sum &+=
          scenario == "valuemiss"
          ? try await cache.value(for: CacheKey<Int>("m", i)) { i }
          : try await hand.value(for: HandCacheKey("m", i)) { i }
      }
      return sum
    }.value
    precondition(sum == (0..<count).reduce(0, &+), "wrong answers")
  case "handisocycle", "handisotaskcycle":
    let sink = Sink()
    let hand = HandActorLoader { sink.take($0) }
    await hand.cycles(count, taskForm: scenario == "handisotaskcycle")
  case "handcycle":
    let hand = HandLoader()
    _ = hand.observers.add { _ in }
    for i in 0..<count { await hand.load { i }.value }
  case "yieldnoobs":
    let model = Model()
    await model.load(\.numbers) { yield in
      for i in 0..<count { yield(.loaded(i)) }
    }
  case "yieldplain":
    let model = PlainModel()
    await model.load(\.numbers) { yield in
      for i in 0..<count { yield(.loaded(i)) }
    }
  case "yieldsinkload":
    // The yielding load with the benchmark's observer (it sums the values; compare with `handdidset`).
    let model = Model()
    let sink = Sink()
    let token = model.observe(\.numbers) { sink.take($0) }
    await model.load(\.numbers) { yield in
      for i in 0..<count { yield(.loaded(i)) }
    }
    withExtendedLifetime(token) {}
  case "yieldobserved":
    // The yielding load of an `@Observed` state (its key path is computed: written through the wrapper's setter).
    let model = Model()
    let sink = Sink()
    let token = model.observe(\.state) { sink.take($0) }
    await model.load(\.state) { yield in
      for i in 0..<count { yield(.loaded(i)) }
    }
    withExtendedLifetime(token) {}
  case "yieldload":
    let model = Model()
    let token = model.observe(\.numbers) { _ in }
    await model.load(\.numbers) { yield in
      for i in 0..<count { yield(.loaded(i)) }
    }
    withExtendedLifetime(token) {}
  default:
    break
  }
  await last?.value
}
/// `yieldvs`: the yielding key-path load with one observer and the `didSet` floor, alternated in the same rounds;
/// prints each one's median and the median of per-round ratios.
@MainActor
func yieldSideBySide() async {
  let sink = Sink()
  let model = Model()
  let token = model.observe(\.numbers) { sink.take($0) }
  let hand = HandDidSetModel()
  _ = hand.observers.add { sink.take($0) }
  var ours: [Double] = []
  var floor: [Double] = []
  for _ in 0..<max(1, observerCount) {
    let start = clock.now
    for i in 0..<count { hand.state = .loaded(i) }
    let middle = clock.now
    await model.load(\.numbers) { yield in
      for i in 0..<count { yield(.loaded(i)) }
    }
    let end = clock.now
    func ns(_ duration: Duration) -> Double {
      (Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9) / Double(count)
    }
    floor.append(ns(start.duration(to: middle)))
    ours.append(ns(middle.duration(to: end)))
  }
  let ratios = zip(ours, floor).map { $0 / $1 }.sorted()
  let median = { (values: [Double]) in values.sorted()[values.count / 2] }
  print("yield \(Int(median(ours))) ns, didSet floor \(Int(median(floor))) ns, ratio \(ratios[ratios.count / 2])")
  withExtendedLifetime(token) {}
}
if scenario == "yieldvs" {
  await yieldSideBySide()
  exit(0)
}
for _ in 0..<max(1, observerCount) { await backToBack(scenario) }
let elapsed = start.duration(to: clock.now)
let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
let operations =
  scenario.hasSuffix("load") || scenario.hasSuffix("cycle") || scenario.hasPrefix("cache")
    || scenario.hasPrefix("handcache") ? count * max(1, observerCount) : count
print("\(scenario): \(Int(nanoseconds / Double(operations))) ns per operation (sink \(total))")

import ProcessedTesting
import Testing

@testable import Processed

/// A seeded, reproducible model-based test of optimistic updates (SPEC, Phase 3, "Shared cache": the `mutate` bullet
/// and its precise rules; issue #26).
///
/// Four states — three `@Loadable` wrappers and a key path of a `LoadableSupport` model — and four keys
/// (`CacheKey<[Int]>("m", 0…2)` sharing a prefix, and `("n", 0)`) go through a random mix of cached `load`s (fresh or
/// stale, silent or not) and `refresh`es, `cancel()`, starts of mutations (each operation waits at a gate of its own),
/// their success, failure or cancellation, cancelling the task of a mutation that succeeded and waits for the others,
/// the success or failure of any fetch started so far (superseded ones included; blocks ignore cancellation), `set`,
/// `invalidate`, `invalidate(prefix:)`, `invalidateAll`, `remove` and `removeAll`. A plain reference model
/// (`MutationModel`) predicts every state, every key's value, `count`, which fetches start (so exactly one
/// invalidation when the last running mutation of a key ends), and when each `mutate` call ends and how; the runner
/// compares after every operation.
///
/// Values are lists that tell where they came from (see `MutationModel`), so a rollback to a snapshot instead of a
/// recomputation, an update lost or applied twice, or a fetch that wrote during a mutation are told apart.
///
/// A failure prints its seed: `PROCESSED_SEED=<seed> swift test --filter LoadCacheMutationModelTests` replays it,
/// `PROCESSED_MODEL_TRACE=1` prints every operation, and `PROCESSED_MODEL_OPS=<n>` sets the operations per seed
/// (default 1,500: 8 seeds × 1,500 = 12,000 operations; `PROCESSED_MODEL_SOAK=<n>` runs seeds 1…n instead). The
/// default run also expects each situation the test is about (`MutationModelRun.situations`) to come up.
@Suite struct LoadCacheMutationModelTests {
  static let seeds: [UInt64] = [
    0x4D07_0001, 0x4D07_0002, 0x4D07_0003, 0x4D07_0004, 0x4D07_0005, 0x4D07_0006, 0x4D07_0007, 0x4D07_0008,
  ]
  static let defaultOperations = 1_500

  @Test(.timeLimit(.minutes(5)))
  @MainActor
  func randomMutationsMatchTheReferenceModel() async {
    let configuration = MBConfiguration.fromEnvironment()
    let operations =
      configuration.operations == MBConfiguration.defaultOperations
      ? Self.defaultOperations : configuration.operations
    let seeds =
      configuration.chosenSeed.map { [$0] } ?? configuration.soakSeeds.map { (1...$0).map(UInt64.init) } ?? Self.seeds
    var total = 0
    var failures = 0
    var coverage: [String: Int] = [:]
    for seed in seeds {
      let run = MutationModelRun(seed: seed, operations: operations, tracing: configuration.tracing)
      let outcome = await run.run()
      total += outcome.operations
      if outcome.failed { failures += 1 }
      coverage.merge(run.coverage, uniquingKeysWith: +)
    }
    print("mutation model-based: \(total) operations in \(seeds.count) runs, \(failures) failed")
    print(coverage.sorted { $0.key < $1.key }.map { "  \($0.key): \($0.value)" }.joined(separator: "\n"))
    if configuration.chosenSeed == nil, configuration.soakSeeds == nil, operations == Self.defaultOperations {
      #expect(total >= Self.seeds.count * Self.defaultOperations || failures > 0, "only \(total) operations")
      for situation in MutationModelRun.situations where coverage[situation, default: 0] == 0 {
        Issue.record("mutation model-based: \(situation) never came up")
      }
    }
  }
}

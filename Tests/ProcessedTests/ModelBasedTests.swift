import Testing

@testable import Processed

/// A seeded, reproducible model-based test of the Phase 1 rules (B1–B6, B8–B10, Observation).
///
/// Each run drives one subject — a standalone `@Loadable`/`@Process`, one inside an ``ObservableModel``, or a
/// `LoadableSupport`/`ProcessSupport` key path on a model whose property notifies from `didSet`, is `@Observed`, is
/// plain, or is itself a wrapper — with a random sequence of operations: loads in the Task, `async` and interrupt
/// forms whose scripted blocks return, throw, throw `CancelLoadable`/`ResetLoadable` (or the process ones), throw
/// `CancellationError`, yield several states in gated stages, ignore cancellation or never finish; `cancel()`,
/// `reset()`, manual writes, cancelled tasks, and observers that are added, cancelled, released, cancel themselves,
/// cancel others or register new ones. A small reference model (`MBRun`) predicts the state, the engine's
/// bookkeeping and every observer's history; the runner compares them after every operation.
///
/// A failure prints its seed; `PROCESSED_SEED=<seed> swift test --filter ModelBased` replays it against every
/// subject, `PROCESSED_MODEL_TRACE=1` prints every operation, and `PROCESSED_MODEL_OPS=<n>` changes the operations
/// per run (default 500: 24 seeds × 500 = 12,000 operations).
@Suite struct ModelBasedTests {
  @Test(.timeLimit(.minutes(5)))
  @MainActor
  func randomOperationsMatchTheReferenceModel() async {
    let configuration = MBConfiguration.fromEnvironment()
    let subjects = MBSubjectKind.allCases
    var runs: [(UInt64, MBSubjectKind)] = []
    if let seed = configuration.chosenSeed {
      runs = subjects.map { (seed, $0) }
    } else if let count = configuration.soakSeeds {
      for seed in 1...UInt64(count) { runs += subjects.map { (seed, $0) } }
    } else {
      for (index, seed) in MBConfiguration.defaultSeeds.enumerated() {
        runs.append((seed, subjects[index % subjects.count]))
      }
    }

    var operations = 0
    var failures = 0
    for (seed, subject) in runs {
      let outcome = await subject.run(
        seed: seed, operations: configuration.operations, tracing: configuration.tracing)
      operations += outcome.operations
      if outcome.failed { failures += 1 }
    }

    print("model-based: \(operations) operations in \(runs.count) runs, \(failures) failed")
    if configuration.isDefault {
      #expect(operations >= 10_000 || failures > 0, "model-based: only \(operations) operations")
    }
  }
}

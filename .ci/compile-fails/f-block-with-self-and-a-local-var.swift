// expect: sending 'attempts' risks causing data races
// The documented limit (DocC "Loads Owned by an Actor", "Keep a block's state in the actor"): a block that uses the
// actor's state and also captures a local `var` the method reads after the call is rejected.
import Processed

actor ConfigStore {
  @IsolatedLoadable var config: LoadableState<Int> = .absent

  func fetch() async throws -> Int { 1 }

  func refreshCounting() async -> Int {
    var attempts = 0
    await $config.refresh {
      attempts += 1
      return try await self.fetch()
    }
    return attempts
  }
}

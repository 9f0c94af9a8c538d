import ProcessedTesting
import Testing

@testable import Processed

private struct User: Sendable, Codable, Equatable {
  let id: Int
  var name: String
}

extension CacheKey where Value == User {
  fileprivate static func user(_ id: Int) -> Self { CacheKey("user", id) }
}

private struct UserService: Sendable {
  let cache = LoadCache(staleTime: .seconds(60))
  let database: @Sendable (Int) async throws -> User

  func user(_ id: Int) async throws -> User {
    try await cache.value(for: .user(id)) { try await database(id) }
  }
}

/// The "Caching Values in Services and Servers" article's example, as it shows it.
@Suite struct CachingValuesArticleTests {
  /// "A hundred requests for user 42 arriving together run one database query."
  @Test func aHundredRequestsRunOneQuery() async throws {
    let queries = LockedBox(0)
    let gate = ActorGate()
    let service = UserService { id in
      queries.withLock { $0 += 1 }
      await gate.wait()
      return User(id: id, name: "user \(id)")
    }
    try await withThrowingTaskGroup(of: User.self) { group in
      for _ in 0..<100 { group.addTask { try await service.user(42) } }
      await gate.untilWaiting(1)
      gate.open()
      for try await user in group { #expect(user == User(id: 42, name: "user 42")) }
    }
    #expect(queries.withLock { $0 } == 1)
    #expect(try await service.user(42).name == "user 42")  // fresh: no query
    #expect(queries.withLock { $0 } == 1)
  }
}

/// The article's "Screens and services share one cache" example.
private actor Prefetcher {
  @IsolatedLoadable var profile: LoadableState<User> = .absent
  let cache: LoadCache
  let database: @Sendable (Int) async throws -> User

  init(cache: LoadCache, database: @escaping @Sendable (Int) async throws -> User) {
    self.cache = cache
    self.database = database
  }

  func warm(_ id: Int) {
    // Bound to the entry a screen shows: the screen's later refreshes reach this state too.
    $profile.load(.user(id), in: cache) { try await self.database(id) }
  }

  func until(_ condition: @escaping (LoadableState<User>) -> Bool) async {
    for await state in $profile.states where condition(state) { return }
  }
}

@Suite struct CachingValuesSharedArticleTests {
  @Test func aPrefetchersStateSeesTheScreensRefresh() async throws {
    let cache = LoadCache(staleTime: .seconds(60))
    let prefetcher = Prefetcher(cache: cache) { id in User(id: id, name: "first") }
    await prefetcher.warm(42)
    try await Task { await prefetcher.until { $0 == .loaded(User(id: 42, name: "first")) } }
      .value(timeLimit: .seconds(30))
    await MainActor.run {
      let screen = Loadable<User>()
      screen.projectedValue.refresh(.user(42), in: cache) { User(id: 42, name: "second") }
    }
    try await Task { await prefetcher.until { $0 == .loaded(User(id: 42, name: "second")) } }
      .value(timeLimit: .seconds(30))
  }
}

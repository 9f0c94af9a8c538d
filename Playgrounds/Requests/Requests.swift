import Processed

// A server's view of a cache: many concurrent "requests" ask one `LoadCache` for users; each user is fetched once,
// however many requests ask at the same time, and a request that gives up ends alone.

struct User: Sendable, CustomStringConvertible {
  let id: Int
  var description: String { "User(\(id))" }
}

extension CacheKey where Value == User {
  static func user(_ id: Int) -> Self { CacheKey("user", id) }
}

/// A stand-in database that counts its queries (any thread).
actor Database {
  private(set) var queries = 0

  func user(_ id: Int) async throws -> User {
    queries += 1
    try await Task.sleep(for: .milliseconds(20))
    return User(id: id)
  }
}

@main
enum Requests {
  static func main() async throws {
    let cache = LoadCache(staleTime: .seconds(60))
    let database = Database()

    // 1,000 requests over 10 users, all at once.
    let served = try await withThrowingTaskGroup(of: User.self) { group in
      for request in 0..<1_000 {
        group.addTask { try await cache.value(for: .user(request % 10)) { try await database.user(request % 10) } }
      }
      var served = 0
      for try await _ in group { served += 1 }
      return served
    }
    print("\(served) requests served with \(await database.queries) database queries")

    // A request that gives up ends at once; the others get the user, fetched once.
    let impatient = Task { try await cache.value(for: .user(99)) { try await database.user(99) } }
    let patient = Task { try await cache.value(for: .user(99)) { try await database.user(99) } }
    impatient.cancel()
    let gaveUp: String
    do {
      _ = try await impatient.value
      gaveUp = "got the user"
    } catch {
      gaveUp = "\(error)"
    }
    print("the impatient request: \(gaveUp); the patient one: \(try await patient.value)")
    print("queries in all: \(await database.queries)")
  }
}

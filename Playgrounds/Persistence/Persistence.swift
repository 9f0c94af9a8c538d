import Foundation
import Processed
import ProcessedStorage

// Two launches of an app in one run: the first fetches a feed and stores it; the second shows the stored feed at once
// (no spinner) and then the fresh one. Each launch is a new `LoadCache` on the same directory.

extension CacheKey where Value == [String] {
  static var feed: Self { CacheKey("feed").persisted() }
}

/// A stand-in server: each request returns the feed as it is now.
actor Server {
  private var requests = 0

  func feed() async throws -> [String] {
    requests += 1
    try await Task.sleep(for: .milliseconds(50))
    return (1...3).map { "post \($0) (request \(requests))" }
  }
}

@MainActor
final class FeedScreen {
  @Loadable var posts: LoadableState<[String]>
}

@main
enum Persistence {
  static func main() async throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("processed-persistence-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let server = Server()
    for launch in 1...2 {
      let cache = LoadCache(storage: FileCacheStorage(directory: directory, version: "1"))
      let screen = FeedScreen()
      let lines = await show(launch, screen: screen, cache: cache, server: server)
      for line in lines { print(line) }
      await cache.flush()  // as an app does when it goes to the background
    }
  }

  @MainActor
  static func show(_ launch: Int, screen: FeedScreen, cache: LoadCache, server: Server) async -> [String] {
    var lines = ["launch \(launch):"]
    let token = screen.$posts.observe { state in
      switch state {
      case .absent: lines.append("  (nothing)")
      case .loading: lines.append("  spinner")
      case .error(let error): lines.append("  error: \(error)")
      case .loaded(let posts): lines.append("  shows \(posts.first ?? "no posts") …")
      }
    }
    await screen.$posts.load(.feed, in: cache) { try await server.feed() }
    token.cancel()
    return lines
  }
}

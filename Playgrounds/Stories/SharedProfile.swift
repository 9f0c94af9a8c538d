import Processed

// 12. A shared cache: two screens show one profile, fetched once; a second visit is a fresh hit; an edit invalidates.

struct Profile: Equatable, Sendable, CustomDebugStringConvertible {
  var name: String
  var debugDescription: String { "Profile(\(name))" }
}

extension CacheKey where Value == Profile {
  static func profile(_ id: Int) -> Self { CacheKey("profile", id) }
}

/// A stand-in server that counts its requests.
@MainActor
final class ProfileServer {
  var requests = 0
  var name = "Ada"

  func profile(_ id: Int) async throws -> Profile {
    requests += 1
    try await Task.sleep(for: .milliseconds(5))
    return Profile(name: name)
  }
}

/// A screen that shows the profile: a header or a detail page.
@MainActor
final class ProfileScreen {
  @Loadable var profile: LoadableState<Profile>
  var history: [String] = []
  private var token: ObservationToken?

  init() {
    token = $profile.observe { [weak self] in self?.history.append(String(reflecting: $0)) }
  }

  func appear(in cache: LoadCache, server: ProfileServer) async {
    await $profile.load(.profile(1), in: cache) { try await server.profile(1) }
  }
}

extension Stories {
  @MainActor
  static func sharedProfile() async {
    print("\n12. Two screens, one profile (LoadCache)")
    let cache = LoadCache(staleTime: .seconds(30))
    let server = ProfileServer()
    let header = ProfileScreen()
    let detail = ProfileScreen()

    // Both appear at once: the second joins the first one's fetch.
    async let headerAppears: Void = header.appear(in: cache, server: server)
    async let detailAppears: Void = detail.appear(in: cache, server: server)
    _ = await (headerAppears, detailAppears)
    print("   both screens appeared: \(server.requests) request")

    // The detail page is shown again within staleTime: a fresh hit, written inside the call.
    await detail.appear(in: cache, server: server)
    print("   detail shown again: still \(server.requests) request")

    // The user renames themselves: invalidating refetches once for every screen that shows the profile.
    server.name = "Ada Lovelace"
    cache.invalidate(.profile(1))
    await header.$profile.load(.profile(1), in: cache) { try await server.profile(1) }
    print("   after the rename: \(server.requests) requests")
    print("   header: " + header.history.joined(separator: " → "))
    print("   detail: " + detail.history.joined(separator: " → "))
  }
}

import Processed

// 14. A configuration owned by an actor: a server refreshes it in the background, each attempt bounded by a timeout
// and retried once, while request handlers keep reading the last one that loaded.

/// What the server is configured with.
struct ServerSettings: Equatable, Sendable, CustomStringConvertible {
  var version: Int
  var maxUploadMB: Int

  var description: String { "v\(version), uploads up to \(maxUploadMB) MB" }
}

/// A stand-in configuration service: answers at once or, while it is down, not before the timeout.
actor SettingsService {
  var settings = ServerSettings(version: 1, maxUploadMB: 10)
  var isDown = false

  func fetch() async throws -> ServerSettings {
    if isDown { try await Task.sleep(for: .seconds(10)) }  // cancelled by the timeout
    return settings
  }

  func setDown(_ down: Bool) { isDown = down }

  func deploy(_ new: ServerSettings) { settings = new }
}

/// The server's copy of its settings: an actor-owned state, refreshed on the actor, read by request handlers.
actor SettingsStore {
  @IsolatedLoadable var settings: LoadableState<ServerSettings> = .absent
  let service: SettingsService
  private(set) var log: [String] = []
  private(set) var attempts = 0
  private var watches: [ObservationToken] = []

  init(service: SettingsService) {
    self.service = service
  }

  /// Logs every state and every activity phase — on the actor, so the observers append to `log` directly.
  func startWatching() {
    watches = [
      $settings.observe { state in self.log.append("state     \(state)") },
      $settings.observeActivity { activity in self.log.append("activity  \(Self.describe(activity))") },
    ]
  }

  func stopWatching() { watches = [] }

  func refresh() async {
    let options = LoadOptions(retry: .constant(.milliseconds(10), maxRetries: 1), timeout: .milliseconds(50))
    await $settings.refresh(options: options) {
      self.attempts += 1  // the actor's own state: no `await`
      return try await self.service.fetch()
    }
  }

  /// What a request handler asks.
  func maxUploadMB() -> Int? { $settings.lastValue?.maxUploadMB }

  var lastError: String { $settings.activity.lastError.map { "\($0)" } ?? "none" }

  static func describe(_ activity: LoadActivity) -> String {
    switch activity.phase {
    case .idle: "idle"
    case .debouncing: "debouncing"
    case .waiting: "waiting"
    case .running(let attempt): "running, attempt \(attempt)"
    case .retrying(let attempt): "retrying, attempt \(attempt) next"
    case .paused: "paused (offline)"
    }
  }
}

extension Stories {
  @MainActor
  static func actorConfig() async {
    print("\n14. A server's settings, owned by an actor (@IsolatedLoadable)")
    let service = SettingsService()
    let store = SettingsStore(service: service)
    await store.startWatching()

    print("   a request before any load: max upload \(await store.maxUploadMB().map { "\($0) MB" } ?? "unknown")")
    await store.refresh()
    print("   at startup: \(await store.settings)")

    // The service goes down: the refresh times out twice (50 ms each, 10 ms apart); requests are served meanwhile.
    await service.setDown(true)
    let refresh = Task { await store.refresh() }
    print("   a request during the refresh: max upload \(await store.maxUploadMB() ?? 0) MB")
    await refresh.value
    print("   after a failed refresh: \(await store.settings); last error: \(await store.lastError)")

    // Back up, with new settings: the next refresh replaces them, with no .loading in between.
    await service.setDown(false)
    await service.deploy(ServerSettings(version: 2, maxUploadMB: 25))
    await store.refresh()
    print("   after the next refresh: \(await store.settings); last error: \(await store.lastError)")

    await store.stopWatching()
    print("   fetch attempts: \(await store.attempts)")
    print("   what the observers saw, on the actor:")
    for line in await store.log { print("     ", line) }
  }
}

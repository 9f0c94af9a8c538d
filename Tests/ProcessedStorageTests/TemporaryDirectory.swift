import Foundation

/// A fresh directory under the system's temporary directory for one test, `base`, in which the storage's directory
/// `cache` is not created yet: a test can check that nothing lands in `base` beside `cache`.
struct TemporaryDirectory {
  /// The test's own directory, `<tmp>/ProcessedStorageTests-<UUID>`.
  let base: String
  /// The storage's directory, `base/cache`, created by its first write.
  var cache: String { base + "/cache" }

  /// Runs `body` with a new temporary directory, which is removed afterwards (also when `body` throws). `body` runs
  /// on the caller's actor (a `@MainActor` test can use it).
  static func with<Result>(
    isolation: isolated (any Actor)? = #isolation, _ body: (TemporaryDirectory) async throws -> Result
  ) async throws -> Result {
    let base = FileManager.default.temporaryDirectory
      .appendingPathComponent("ProcessedStorageTests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: base) }
    return try await body(TemporaryDirectory(base: base))
  }

  /// The names of the entries of `path` (hidden ones included), sorted; none when it does not exist.
  static func entries(of path: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
  }

  /// The names of the entries of the storage's directory, sorted.
  var cacheEntries: [String] { Self.entries(of: cache) }
}

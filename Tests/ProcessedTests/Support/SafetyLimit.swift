/// The one place the test support waits on real time: a safety limit that turns a wait which would hang (a bug) into
/// a failure. A passing test never reaches it; time that a test is about runs on `TestClock`, and a block that must
/// be slow waits on a `Gate` or until it is cancelled.
enum SafetyLimit {
  /// The limit the waits use unless they are given one.
  static let standard = Duration.seconds(30)

  /// Runs `expire` on the main actor once `limit` of real time has passed, unless the returned task is cancelled
  /// first (cancel it when the wait it guards ends).
  @discardableResult
  static func start(_ limit: Duration = standard, _ expire: @escaping @MainActor () -> Void) -> Task<Void, Never> {
    Task { @MainActor in
      guard (try? await Task.sleep(for: limit)) != nil else { return }
      expire()
    }
  }
}

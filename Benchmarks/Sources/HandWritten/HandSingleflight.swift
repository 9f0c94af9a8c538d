// The hand-written baseline of `LoadCache.value(for:)`'s miss: an actor that runs one fetch per key at a time and
// lets concurrent callers of the same key join it ("singleflight"). `@inlinable`, like the rest of this target, so
// that it is specialized and inlined into the benchmark as Processed's code is.

/// The fetches in flight, by key, on an actor (default executor). A call joins the key's task if one is in flight,
/// else starts one, and the call that started it removes it when it ends. Nothing is kept after: every call with no
/// fetch in flight fetches.
public actor HandSingleflight {
  @usableFromInline var inFlight: [HandCacheKey: Task<Int, any Error>] = [:]

  /// No fetch in flight.
  @inlinable
  public init() {}

  /// The value `fetch` returns for `key`, from the fetch in flight for `key` if there is one.
  @inlinable
  public func value(for key: HandCacheKey, fetch: @escaping @Sendable () async throws -> Int) async throws -> Int {
    if let task = inFlight[key] { return try await task.value }
    let task = Task { try await fetch() }
    inFlight[key] = task
    defer { inFlight[key] = nil }
    return try await task.value
  }
}

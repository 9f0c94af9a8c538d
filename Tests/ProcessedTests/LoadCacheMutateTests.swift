import ProcessedTesting
import Testing

@testable import Processed

private struct Rejected: Error, Equatable {}

private extension CacheKey where Value == [String] {
  static var comments: Self { CacheKey("comments") }
}

@MainActor
private final class CommentsScreen {
  @Loadable var comments: LoadableState<[String]>
}

/// A server whose answers the test releases one by one: each request waits at a gate of its own.
@MainActor
private final class Server {
  var stored = ["a"]
  var requests = 0
  let gates = [Gate(), Gate(), Gate(), Gate()]

  /// Opens every gate, so that no request is left waiting when a test ends (a parked task is a leak at exit).
  func finish() {
    for gate in gates { gate.open() }
  }

  func comments() async -> [String] {
    requests += 1
    await gates[requests - 1].wait()
    return stored
  }
}

@MainActor
@Suite struct LoadCacheMutateTests {
  let clock = TestClock()

  /// A screen bound to the comments, showing `["a"]` (the server's first answer).
  private func boundScreen(_ cache: LoadCache, _ server: Server) async -> CommentsScreen {
    let screen = CommentsScreen()
    server.gates[0].open()
    await screen.$comments.load(.comments, in: cache) { await server.comments() }
    return screen
  }

  @Test func aRefetchInFlightNeverOverwritesTheOptimisticValue() async throws {
    let cache = LoadCache(clock: clock)
    let server = Server()
    defer { server.finish() }
    let screen = await boundScreen(cache, server)
    // A refetch is in flight (the server answers ["a"], from before the comment)…
    let refetch: Task<Void, Never> = screen.$comments.refresh(.comments, in: cache) { await server.comments() }
    await server.gates[1].untilWaiting(1)
    let posted = Gate()
    let mutation = Task {
      try await cache.mutate(.comments, optimistic: { $0.append("b") }) {
        await posted.wait()
        server.stored.append("b")
      }
    }
    await posted.untilWaiting(1)
    #expect(screen.comments == .loaded(["a", "b"]))  // at once
    let recorder = StateRecorder(screen.$comments)
    // …and answers while the mutation runs: dropped.
    server.gates[1].open()
    try await refetch.value(timeLimit: .seconds(30))
    #expect(screen.comments == .loaded(["a", "b"]))
    // The mutation ends: the key is invalidated once and fetches the server's answer.
    posted.open()
    try await mutation.value(timeLimit: .seconds(30))
    await server.gates[2].untilWaiting(1)
    server.gates[2].open()
    try await recorder.wait(forCount: 1)
    #expect(recorder.values == [.loaded(["a", "b"])])  // the server's answer after the mutation
    #expect(!recorder.values.contains(.loaded(["a"])))
    #expect(server.requests == 3)
  }

  @Test func aFailureUndoesExactlyItsOwnUpdateWhileAnOverlappingOneStays() async throws {
    let cache = LoadCache(clock: clock)
    let server = Server()
    defer { server.finish() }
    let screen = await boundScreen(cache, server)
    let (first, second) = (Gate(), Gate())
    let failing = Task {
      try await cache.mutate(.comments, optimistic: { $0.append("b") }) {
        await first.wait()
        throw Rejected()
      }
    }
    await first.untilWaiting(1)
    let succeeding = Task {
      try await cache.mutate(.comments, optimistic: { $0.append("c") }) {
        await second.wait()
        server.stored.append("c")
      }
    }
    await second.untilWaiting(1)
    #expect(screen.comments == .loaded(["a", "b", "c"]))
    first.open()
    await #expect(throws: Rejected.self) { try await failing.value(timeLimit: .seconds(30)) }
    #expect(screen.comments == .loaded(["a", "c"]))  // the base with the other update applied again
    #expect(server.requests == 1)  // no invalidation while one still runs
    second.open()
    try await succeeding.value(timeLimit: .seconds(30))
    await server.gates[1].untilWaiting(1)
    server.gates[1].open()
    try await StateRecorder(screen.$comments).wait(forCount: 1)
    #expect(screen.comments == .loaded(["a", "c"]))
    #expect(server.requests == 2)
  }

  @Test func twoSuccessesEndInOneInvalidationAndOneFetch() async throws {
    let cache = LoadCache(clock: clock)
    let server = Server()
    defer { server.finish() }
    let screen = await boundScreen(cache, server)
    let (first, second) = (Gate(), Gate())
    let one = Task {
      try await cache.mutate(.comments, optimistic: { $0.append("b") }) {
        await first.wait()
        server.stored.append("b")
      }
    }
    await first.untilWaiting(1)
    let two = Task {
      try await cache.mutate(.comments, optimistic: { $0.append("c") }) {
        await second.wait()
        server.stored.append("c")
      }
    }
    await second.untilWaiting(1)
    first.open()
    try await one.value(timeLimit: .seconds(30))  // returns as soon as its own operation ends
    #expect(server.requests == 1)  // no invalidation while the second runs
    #expect(screen.comments == .loaded(["a", "b", "c"]))  // the first's update stays applied
    second.open()
    try await two.value(timeLimit: .seconds(30))
    await server.gates[1].untilWaiting(1)  // one invalidation, one fetch
    #expect(server.requests == 2)
    server.gates[1].open()
    try await StateRecorder(screen.$comments).wait(forCount: 1)
    #expect(screen.comments == .loaded(["a", "b", "c"]))
    #expect(server.requests == 2)
  }

  @Test func aMutationOfAKeyWithNoValueAppliesNothingAndStillInvalidates() async throws {
    let cache = LoadCache(clock: clock)
    var called = false
    try await cache.mutate(.comments, optimistic: { _ in called = true }) {}
    #expect(!called)
    #expect(cache.count == 0)  // no entry made for it
    // A state bound meanwhile fetches again when the mutation ends.
    let server = Server()
    defer { server.finish() }
    let screen = CommentsScreen()
    let running = Gate()
    let mutation = Task {
      try await cache.mutate(.comments, optimistic: { $0.append("x") }) { await running.wait() }
    }
    await running.untilWaiting(1)
    let load: Task<Void, Never> = screen.$comments.load(.comments, in: cache) { await server.comments() }
    server.gates[0].open()
    await load.value  // its fetch ended during the mutation: dropped, nothing written
    #expect(screen.comments == .loading)
    running.open()
    try await mutation.value(timeLimit: .seconds(30))
    server.gates[1].open()
    try await StateRecorder(screen.$comments).wait(forCount: 1)
    #expect(screen.comments == .loaded(["a"]))
  }

  @Test func aCancelledOperationIsUndoneAndRethrowsCancellation() async throws {
    let cache = LoadCache(clock: clock)
    let server = Server()
    defer { server.finish() }
    let screen = await boundScreen(cache, server)
    let started = Gate()
    let mutation = Task {
      try await cache.mutate(.comments, optimistic: { $0.append("b") }) {
        await started.wait()
        try Task.checkCancellation()
      }
    }
    await started.untilWaiting(1)
    #expect(screen.comments == .loaded(["a", "b"]))
    mutation.cancel()
    started.open()
    await #expect(throws: CancellationError.self) { try await mutation.value(timeLimit: .seconds(30)) }
    #expect(screen.comments == .loaded(["a"]))
  }

  @Test func removeAllDuringAMutationEndsItsBookkeeping() async throws {
    let cache = LoadCache(clock: clock)
    let server = Server()
    defer { server.finish() }
    let screen = await boundScreen(cache, server)
    let running = Gate()
    let mutation = Task {
      try await cache.mutate(.comments, optimistic: { $0.append("b") }) {
        await running.wait()
        throw Rejected()
      }
    }
    await running.untilWaiting(1)
    cache.removeAll()
    #expect(screen.comments == .loaded(["a", "b"]))  // unbound: keeps what it shows
    running.open()
    await #expect(throws: Rejected.self) { try await mutation.value(timeLimit: .seconds(30)) }
    #expect(screen.comments == .loaded(["a", "b"]))  // nothing written
    #expect(cache.count == 0)  // nothing invalidated or made
    #expect(server.requests == 1)
  }

  @Test func setDuringAMutationBecomesTheBase() async throws {
    let cache = LoadCache(clock: clock)
    let server = Server()
    defer { server.finish() }
    let screen = await boundScreen(cache, server)
    let running = Gate()
    let mutation = Task {
      try await cache.mutate(.comments, optimistic: { $0.append("b") }) {
        await running.wait()
        throw Rejected()
      }
    }
    await running.untilWaiting(1)
    cache.set(["z"], for: .comments)
    #expect(screen.comments == .loaded(["z", "b"]))
    running.open()
    await #expect(throws: Rejected.self) { try await mutation.value(timeLimit: .seconds(30)) }
    #expect(screen.comments == .loaded(["z"]))
  }
}

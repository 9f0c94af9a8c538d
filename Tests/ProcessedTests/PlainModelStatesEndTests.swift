import ProcessedTesting
import Testing

@testable import Processed

/// A class that is not an `ObservableModel` tells no one when it goes away: the `states` of its key-path controllers
/// end, and their observers are dropped, at the sweep that finds it gone (every second while such a slot is open).
/// Found from outside: they never ended.
@MainActor
@Suite struct PlainModelStatesEndTests {
  @MainActor
  final class Plain: LoadableSupport {
    var number: LoadableState<Int> = .absent
  }

  /// Reads `stream` to its end, with a limit of real time: the sweep runs every second.
  func collected(_ stream: AsyncStream<LoadableState<Int>>) async throws -> [LoadableState<Int>] {
    try await Task {
      var seen: [LoadableState<Int>] = []
      for await state in stream { seen.append(state) }
      return seen
    }.value(timeLimit: .seconds(60))
  }

  @Test func statesEndWhenTheModelGoesWithoutALoad() async throws {
    var model: Plain? = Plain()
    weak let released = model
    let stream = model!.loadables.number.states
    model = nil
    #expect(released == nil)
    #expect(try await collected(stream) == [.absent])
  }

  @Test func statesEndWhenTheModelGoesAfterItsLoadsEnded() async throws {
    var model: Plain? = Plain()
    weak let released = model
    let stream = model!.loadables.number.states
    await model!.load(\.number) { 1 }
    model = nil
    #expect(released == nil)
    #expect(try await collected(stream) == [.absent, .loading, .loaded(1)])
  }

  @Test func aLiveModelsStatesGoOnAcrossSweeps() async throws {
    let live = Plain()
    var goneModel: Plain? = Plain()
    let liveStream = live.loadables.number.states
    let goneStream = goneModel!.loadables.number.states
    goneModel = nil
    _ = try await collected(goneStream)  // a sweep ran
    let recorder = StateRecorder(live.loadables.number)
    await live.load(\.number) { 2 }
    try await recorder.wait(until: { $0 == .loaded(2) })
    #expect(live.number == .loaded(2))
    withExtendedLifetime(liveStream) {}
  }
}

import ProcessedTesting
import Testing

@testable import Processed

/// Every operation through every face of a state, checked against one expected history (spec, "Phase-3 rules made
/// precise": "Every operation works through every face of a state: `$x`, the key path (`load(\.x)`),
/// `model.loadables.x` — for wrapper properties and plain properties alike"). The history is what
/// `model.observe(\.x)` saw; the face's own `observe` must see the same. A new operation or face joins here.
@MainActor
@Suite struct FaceMatrixTests {
  typealias Feed = Pages<Int, Int>

  @MainActor
  final class Model: ObservableModel, LoadableSupport {
    let observers = ObserverRegistry()
    @Loadable var wrapped: LoadableState<Feed>
    var plain: LoadableState<Feed> = .absent
  }

  /// A way to reach one state of a ``Model``.
  enum Face: String, CaseIterable, CustomTestStringConvertible {
    /// `$wrapped`
    case dollar
    /// `load(\.wrapped)` — the key path of a `@Loadable` property
    case wrapperKeyPath
    /// `model.loadables.wrapped`
    case wrapperLoadables
    /// `load(\.plain)` — a plain stored property
    case plainKeyPath
    /// `model.loadables.plain`
    case plainLoadables

    var testDescription: String { rawValue }

    @MainActor var keyPath: ReferenceWritableKeyPath<Model, LoadableState<Feed>> {
      switch self {
      case .dollar, .wrapperKeyPath, .wrapperLoadables: \.wrapped
      case .plainKeyPath, .plainLoadables: \.plain
      }
    }

    /// The controller of the face, for the faces that are one.
    @MainActor func controller(_ model: Model) -> LoadableController<Feed>? {
      switch self {
      case .dollar: model.$wrapped
      case .wrapperLoadables: model.loadables.wrapped
      case .plainLoadables: model.loadables.plain
      case .wrapperKeyPath, .plainKeyPath: nil
      }
    }

    @MainActor func load(_ model: Model, _ block: @escaping @MainActor () async throws -> Feed) -> Task<Void, Never> {
      if let controller = controller(model) { return controller.load(block: block) }
      return model.load(keyPath, block: block)
    }

    @MainActor func refresh(_ model: Model, _ block: @escaping @MainActor () async throws -> Feed) async {
      if let controller = controller(model) { return await controller.refresh(block: block) }
      await model.refresh(keyPath, block: block)
    }

    @MainActor func loadMore(_ model: Model, _ block: @escaping @MainActor (Int) async throws -> Feed) async {
      if let controller = controller(model) { return await controller.loadMore(block: block) }
      await model.loadMore(keyPath, block: block)
    }

    @MainActor func cancel(_ model: Model) {
      if let controller = controller(model) { return controller.cancel() }
      model.cancel(keyPath)
    }

    @MainActor func reset(_ model: Model) {
      if let controller = controller(model) { return controller.reset() }
      model.reset(keyPath)
    }

    @MainActor func load(
      _ model: Model, _ key: CacheKey<Feed>, in cache: LoadCache, _ block: @escaping @MainActor () async throws -> Feed
    ) async {
      if let controller = controller(model) { return await controller.load(key, in: cache, block: block) }
      await model.load(keyPath, key: key, in: cache, block: block)
    }

    @MainActor func refresh(
      _ model: Model, _ key: CacheKey<Feed>, in cache: LoadCache, _ block: @escaping @MainActor () async throws -> Feed
    ) async {
      if let controller = controller(model) { return await controller.refresh(key, in: cache, block: block) }
      await model.refresh(keyPath, key: key, in: cache, block: block)
    }

    /// The face's own observer (`model.observe` for a bare key path).
    @MainActor func observe(_ model: Model, _ onChange: @escaping @MainActor (LoadableState<Feed>) -> Void)
      -> ObservationToken
    {
      if let controller = controller(model) { return controller.observe(onChange) }
      return model.observe(keyPath, onChange)
    }
  }

  static func page(_ cursor: Int, version: Int = 0) -> Feed {
    Pages(items: [cursor, cursor + 1].map { $0 + 100 * version }, nextCursor: cursor + 2 < 6 ? cursor + 2 : nil)
  }

  /// Records what `model.observe(\.x)` and the face's own `observe` see.
  @MainActor
  final class Histories {
    let model: StateRecorder<LoadableState<Feed>>
    let face = StateRecorder<LoadableState<Feed>>()

    init(_ face: Face, of model: Model) {
      self.model = StateRecorder(model, face.keyPath)
      self.face.token = face.observe(model) { [weak self] in self?.face.record($0) }
    }

    func expect(_ expected: [LoadableState<Feed>], sourceLocation: SourceLocation = #_sourceLocation) {
      #expect(model.values == expected, sourceLocation: sourceLocation)
      #expect(face.values == expected, sourceLocation: sourceLocation)
    }
  }

  @Test(arguments: Face.allCases)
  func load(_ face: Face) async throws {
    let model = Model()
    let histories = Histories(face, of: model)
    try await face.load(model) { Self.page(0) }.value(timeLimit: .seconds(30))
    histories.expect([.loading, .loaded(Self.page(0))])
  }

  @Test(arguments: Face.allCases)
  func refreshKeepsTheValueOnScreen(_ face: Face) async throws {
    let model = Model()
    try await face.load(model) { Self.page(0) }.value(timeLimit: .seconds(30))
    let histories = Histories(face, of: model)
    await face.refresh(model) { Self.page(0, version: 1) }
    histories.expect([.loaded(Self.page(0, version: 1))])
  }

  @Test(arguments: Face.allCases)
  func loadMoreAppendsThePage(_ face: Face) async throws {
    let model = Model()
    try await face.load(model) { Self.page(0) }.value(timeLimit: .seconds(30))
    let histories = Histories(face, of: model)
    await face.loadMore(model) { cursor in Self.page(cursor) }
    await face.loadMore(model) { cursor in Self.page(cursor) }
    await face.loadMore(model) { _ in
      Issue.record("no next page: the block never runs")
      return Self.page(0)
    }
    histories.expect([
      .loaded(Pages(items: [0, 1, 2, 3], nextCursor: 4)), .loaded(Pages(items: Array(0..<6), nextCursor: nil)),
    ])
  }

  @Test(arguments: Face.allCases)
  func cancelLeavesTheStateAndTheBlocksResultIsNeverWritten(_ face: Face) async throws {
    let model = Model()
    let histories = Histories(face, of: model)
    let gate = Gate()
    let task = face.load(model) {
      await gate.wait()
      return Self.page(0)
    }
    await gate.untilWaiting(1)
    face.cancel(model)
    gate.open()
    try await task.value(timeLimit: .seconds(30))
    histories.expect([.loading])
  }

  @Test(arguments: Face.allCases)
  func resetStopsTheLoadAndWritesAbsent(_ face: Face) async throws {
    let model = Model()
    let histories = Histories(face, of: model)
    let gate = Gate()
    let task = face.load(model) {
      await gate.wait()
      return Self.page(0)
    }
    await gate.untilWaiting(1)
    face.reset(model)
    gate.open()
    try await task.value(timeLimit: .seconds(30))
    histories.expect([.loading, .absent])
  }

  @Test(arguments: Face.allCases)
  func aCachedLoadBindsTheState(_ face: Face) async throws {
    let cache = LoadCache(staleTime: .seconds(60))
    let key = CacheKey<Feed>("feed")
    let model = Model()
    let histories = Histories(face, of: model)
    await face.load(model, key, in: cache) { Self.page(0) }
    await face.load(model, key, in: cache) {  // a fresh hit of the value it shows: nothing written
      Issue.record("a fresh hit never runs its block")
      return Self.page(0)
    }
    cache.set(Self.page(0, version: 1), for: key)  // bound: the write reaches it
    histories.expect([.loading, .loaded(Self.page(0)), .loaded(Self.page(0, version: 1))])
    #expect(cache.value(for: key) == Self.page(0, version: 1))
  }

  @Test(arguments: Face.allCases)
  func aCachedRefreshWritesOnlyTheNewValue(_ face: Face) async throws {
    let cache = LoadCache(staleTime: .seconds(60))
    let key = CacheKey<Feed>("feed")
    let model = Model()
    await face.load(model, key, in: cache) { Self.page(0) }
    let histories = Histories(face, of: model)
    await face.refresh(model, key, in: cache) { Self.page(0, version: 1) }
    histories.expect([.loaded(Self.page(0, version: 1))])
  }

  @Test(arguments: Face.allCases)
  func aCachedLoadMoreGoesThroughTheEntry(_ face: Face) async throws {
    let cache = LoadCache(staleTime: .seconds(60))
    let key = CacheKey<Feed>("feed")
    let model = Model()
    let other = Model()
    await face.load(model, key, in: cache) { Self.page(0) }
    await other.$wrapped.load(key, in: cache) { Self.page(0) }
    let histories = Histories(face, of: model)
    await face.loadMore(model) { cursor in Self.page(cursor) }
    let appended = Pages(items: [0, 1, 2, 3], nextCursor: 4)
    histories.expect([.loaded(appended)])
    #expect(other.wrapped == .loaded(appended))
    #expect(cache.value(for: key) == appended)
  }

  @Test(arguments: Face.allCases)
  func cancelAndResetUnbindFromTheCache(_ face: Face) async throws {
    let cache = LoadCache(staleTime: .seconds(60))
    let key = CacheKey<Feed>("feed")
    let model = Model()
    await face.load(model, key, in: cache) { Self.page(0) }
    face.cancel(model)
    cache.set(Self.page(0, version: 1), for: key)
    #expect(model[keyPath: face.keyPath] == .loaded(Self.page(0)))
    await face.load(model, key, in: cache) { Self.page(0) }  // bound again (a fresh hit)
    face.reset(model)
    cache.set(Self.page(0, version: 2), for: key)
    #expect(model[keyPath: face.keyPath] == .absent)
  }
}

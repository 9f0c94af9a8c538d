// The ```swift examples of the doc comments in Sources/Processed and of the articles in Processed.docc, compiled and
// run. Each example is copied verbatim (indented only; swift-format collapses the spaces that align trailing comments)
// under a `// doc: File:LINE` comment that names its source; the names an example assumes (`api`, `model`, `tokens`,
// `fetchNumbers()`, `log(_:)`, …) are the stubs in `DocExamples` below. Where the doc comment itself is wrong, the
// corrected form is used under `// doc corrected`; the doc comments now show it.
//
// Only the public API is imported, as a reader of the docs would: no `@testable`.
import Processed
import ProcessedTesting
import Testing

// MARK: - Stubs

/// The names the doc examples assume, as small stand-ins that return at once.
///
/// Examples are nested in this namespace, so `api`, `print`, `log` and the other names they use unqualified resolve
/// here. `print` records what it would print, so that tests can assert the output the comments promise.
@MainActor
enum DocExamples {
  struct Post: Equatable, Sendable {
    var title: String
  }

  struct User: Sendable {
    var name: String
  }

  struct Session: Sendable {
    var user: User?
  }

  struct Draft: Sendable {
    var text: String
  }

  struct MyError: Error {}

  /// "Your networking code": every call returns at once.
  struct API: Sendable {
    func numbers() async throws -> [Int] { [1, 2, 3] }
    func feed() async throws -> [Post] { [Post(title: "first")] }
    func feed(for user: User) async throws -> [Post] { [Post(title: "for \(user.name)")] }
    func save() async throws {}
    func save(_ draft: Draft) async throws {}
    func upload() async throws {}
    func delete() async throws {}
    func cached() async throws -> [Int] { [0] }
    func fresh() async throws -> [Int] { [1, 2, 3] }

    /// Two pages, `[1]` and `[1, 2]`.
    func pages() -> AsyncThrowingStream<[Int], any Error> {
      AsyncThrowingStream { continuation in
        continuation.yield([1])
        continuation.yield([1, 2])
        continuation.finish()
      }
    }
  }

  /// A SwiftUI-like button, for the example that disables one.
  struct Button {
    let title: String
    let action: () -> Void
    var isDisabled = false

    init(_ title: String, action: @escaping () -> Void) {
      self.title = title
      self.action = action
    }

    func disabled(_ disabled: Bool) -> Button {
      var button = self
      button.isDisabled = disabled
      return button
    }
  }

  static let api = API()

  static var isSignedIn = true
  static var hasChanges = true
  static var isOnline = true
  static var session = Session(user: User(name: "ada"))
  static var draft = Draft(text: "draft")
  static var showSlowNetworkHint = false

  /// What the examples printed, logged, rendered or showed, in order.
  static var printed: [String] = [] {
    didSet { printing.fire() }
  }
  /// Fired after every change of `printed`, for a test that waits for an example to print.
  static let printing = Signal()
  static var logged: [String] = []
  static var rendered: [[Post]] = []
  static var alerts: [String] = []
  static var shown: [String] = []

  /// Records what `Swift.print` would print.
  static func print(_ items: Any...) {
    printed.append(items.map { "\($0)" }.joined(separator: " "))
  }

  static func log(_ item: Any) { logged.append("\(item)") }
  static func render(_ posts: [Post]) { rendered.append(posts) }
  static func showAlert(for error: any Error) { alerts.append("\(error)") }
  static func showPlaceholder() { shown.append("placeholder") }
  static func showSpinner() { shown.append("spinner") }
  static func showDeleteSpinner() { shown.append("delete spinner") }
  static func show(_ item: Any) { shown.append("\(item)") }

  /// Puts every stub back as it was.
  static func resetStubs() {
    isSignedIn = true
    hasChanges = true
    isOnline = true
    session = Session(user: User(name: "ada"))
    draft = Draft(text: "draft")
    showSlowNetworkHint = false
    printed = []
    logged = []
    rendered = []
    alerts = []
    shown = []
  }
}

/// Collects the value of every expression statement, for examples written as `expression  // result` lines (which
/// would otherwise warn that the result is unused). `Void` statements contribute nothing.
@resultBuilder
enum DocValues {
  static func buildExpression<Value>(_ value: Value) -> [Any] { [value] }
  static func buildExpression(_ value: Void) -> [Any] { [] }
  static func buildBlock(_ parts: [Any]...) -> [Any] { parts.flatMap { $0 } }
}

// MARK: - KeyPaths/LoadableSupport.swift

extension DocExamples {
  @MainActor
  enum LoadableSupportDocs {
    // doc: LoadableSupport.swift:9
    @MainActor
    final class NumbersViewModel: LoadableSupport {
      var numbers: LoadableState<[Int]> = .absent

      func refresh() {
        load(\.numbers) {
          try await fetchNumbers()  // no `self.` needed
        }
      }

      func fetchNumbers() async throws -> [Int] { [1, 2, 3] }
    }

    /// The fragments run inside a class like the one above.
    @MainActor
    final class Fragments: ObservableModel, LoadableSupport {
      let observers = ObserverRegistry()
      var numbers: LoadableState<[Int]> = .absent
      var cached: [Int] = [0]

      func fetchNumbers() async throws -> [Int] { [1, 2, 3] }

      // doc: LoadableSupport.swift:46
      func fragment46() -> Task<Void, Never> {
        load(\.numbers) { try await fetchNumbers() }
      }

      // doc: LoadableSupport.swift:70
      func fragment70() -> Task<Void, Never> {
        load(\.numbers) { yield in
          yield(.loaded(cached))
          yield(.loaded(try await fetchNumbers()))
        }
      }

      // doc: LoadableSupport.swift:98
      func fragment98() -> Task<Void, Never> {
        load(\.numbers, interrupts: [.seconds(10)]) {
          try await fetchNumbers()
        } onInterrupt: { _ in
          throw TimeoutError()
        }
      }

      // doc: LoadableSupport.swift:131
      func fragment131() -> Task<Void, Never> {
        load(\.numbers, interrupts: [.seconds(2)]) { yield in
          yield(.loaded(try await fetchNumbers()))
        } onInterrupt: { _ in
          print("still loading")
        }
      }

      // doc: LoadableSupport.swift:167
      func fragment167() async {
        await load(\.numbers) { try await fetchNumbers() }
      }

      // doc: LoadableSupport.swift:187
      func fragment187() async {
        await load(\.numbers) { yield in yield(.loaded([1])) }
      }

      // doc: LoadableSupport.swift:207
      func fragment207() async {
        await load(\.numbers, interrupts: [.seconds(10)]) {
          try await fetchNumbers()
        } onInterrupt: { _ in
          throw TimeoutError()
        }
      }

      // doc: LoadableSupport.swift:236
      func fragment236() async {
        await load(\.numbers, interrupts: [.seconds(1)]) { yield in
          yield(.loaded(try await fetchNumbers()))
        } onInterrupt: { delay in
          print("waited", delay)
        }
      }

      // doc: LoadableSupport.swift:267
      func fragment267() {
        cancel(\.numbers)
      }

      // doc: LoadableSupport.swift:281
      func fragment281() {
        reset(\.numbers)
      }
    }
  }
}

// MARK: - KeyPaths/ProcessSupport.swift

extension DocExamples {
  @MainActor
  enum ProcessSupportDocs {
    // doc: ProcessSupport.swift:11
    @MainActor
    final class EditorViewModel: ProcessSupport {
      enum Action: Equatable, Sendable { case save, delete }

      var action: ProcessState<Action> = .idle
      var upload: SingleProcessState = .idle

      func save() {
        run(\.action, as: .save) { try await persist() }
      }

      func startUpload() {
        run(\.upload) { try await persist() }
      }

      func persist() async throws {}
    }

    /// The fragments run inside a class like the one above.
    @MainActor
    final class Fragments: ObservableModel, ProcessSupport {
      enum Action: Equatable, Sendable { case save, delete }

      let observers = ObserverRegistry()
      var action: ProcessState<Action> = .idle
      var upload: SingleProcessState = .idle

      func persist() async throws {}

      // doc: ProcessSupport.swift:37
      func fragment37() -> Task<Void, Never> {
        run(\.action, as: .save) { try await persist() }
      }

      // doc: ProcessSupport.swift:63
      func fragment63() -> Task<Void, Never> {
        run(\.action, as: .save, interrupts: [.seconds(10)]) {
          try await persist()
        } onInterrupt: { _ in
          throw TimeoutError()
        }
      }

      // doc: ProcessSupport.swift:98
      func fragment98() -> Task<Void, Never> {
        run(\.upload) { try await persist() }
      }

      // doc: ProcessSupport.swift:122
      func fragment122() -> Task<Void, Never> {
        run(\.upload, interrupts: [.seconds(30)]) {
          try await persist()
        } onInterrupt: { _ in
          throw TimeoutError()
        }
      }

      // doc: ProcessSupport.swift:159
      func fragment159() async {
        await run(\.action, as: .save) { try await persist() }
      }

      // doc: ProcessSupport.swift:181
      func fragment181() async {
        await run(\.action, as: .save, interrupts: [.seconds(10)]) {
          try await persist()
        } onInterrupt: { _ in
          throw TimeoutError()
        }
      }

      // doc: ProcessSupport.swift:212
      func fragment212() async {
        await run(\.upload) { try await persist() }
      }

      // doc: ProcessSupport.swift:232
      func fragment232() async {
        await run(\.upload, interrupts: [.seconds(30)]) {
          try await persist()
        } onInterrupt: { _ in
          throw TimeoutError()
        }
      }

      // doc: ProcessSupport.swift:263
      func fragment263() {
        cancel(\.action)
      }

      // doc: ProcessSupport.swift:279
      func fragment279() {
        reset(\.action)
      }
    }
  }
}

// MARK: - Observation

extension DocExamples {
  @MainActor
  enum ObservationDocs {
    // doc: ObservableModel.swift:10
    static func observableModel10() -> ObservationToken {
      @MainActor
      final class FeedModel: ObservableModel, LoadableSupport {
        let observers = ObserverRegistry()
        var feed: LoadableState<[String]> = .absent
        @Observed var filter = ""

        func refresh() {
          load(\.feed) { ["first", "second"] }
        }
      }

      let model = FeedModel()
      let token = model.observe(\.feed) { state in print(state) }
      model.refresh()  // prints .loading, then .loaded(["first", "second"])
      return token
    }

    /// The `model` of the fragments below.
    @MainActor
    final class FeedModel: ObservableModel, LoadableSupport {
      let observers = ObserverRegistry()
      var feed: LoadableState<[String]> = .absent
    }

    // doc: ObservableModel.swift:37
    static func observableModel37(model: FeedModel, tokens: inout Set<ObservationToken>) {
      model.observe(\.feed) { state in
        if case .error(let error) = state { log(error) }
      }
      .store(in: &tokens)
    }

    @MainActor
    final class QueryModel: ObservableModel {
      let observers = ObserverRegistry()

      // doc: ObservableModel.swift:84
      var query = "" {
        didSet { notifyObservers(\.query) }
      }
    }

    /// The `model` (and the owner of `$numbers`) of the fragments below.
    @MainActor
    final class NumbersModel: ObservableModel {
      let observers = ObserverRegistry()
      @Loadable var numbers: LoadableState<[Int]>

      // doc: ObservationToken.swift:41
      func observationToken41(tokens: inout Set<ObservationToken>) {
        $numbers.observe { print($0) }.store(in: &tokens)
      }
    }

    // doc: ObservationToken.swift:7
    static func observationToken7(model: NumbersModel) {
      var tokens = Set<ObservationToken>()
      model.observe(\.numbers) { state in print(state) }.store(in: &tokens)
      tokens.removeAll()  // stops observing
    }

    // doc: Observed.swift:3
    static func observed3() -> ObservationToken {
      @MainActor
      final class SearchModel: ObservableModel {
        let observers = ObserverRegistry()
        @Observed var query = ""
      }

      let model = SearchModel()
      let token = model.observe(\.query) { print("query is now", $0) }
      model.query = "swift"  // prints "query is now swift"
      return token
    }

    // doc: ObserverRegistry.swift:19
    @MainActor
    final class Profile: ObservableModel, LoadableSupport {
      let observers = ObserverRegistry()
      var avatar: LoadableState<[UInt8]> = .absent
    }
  }
}

// MARK: - States/ControlErrors.swift

extension DocExamples {
  @MainActor
  enum ControlErrorsDocs {
    /// The owner of `$feed` and `$save` in the fragments.
    @MainActor
    final class Fragments {
      @Loadable var feed: LoadableState<[Post]>
      @Process var save

      // doc: ControlErrors.swift:8
      func fragment8() -> Task<Void, Never> {
        $feed.load {
          guard isSignedIn else { throw CancelLoadable() }
          return try await api.feed()
        }
      }

      // doc: ControlErrors.swift:24
      func fragment24() -> Task<Void, Never> {
        $feed.load {
          guard let user = session.user else { throw ResetLoadable() }
          return try await api.feed(for: user)
        }
      }

      // doc: ControlErrors.swift:40
      func fragment40() -> Task<Void, Never> {
        $save.run {
          guard hasChanges else { throw CancelProcess() }
          try await api.save(draft)
        }
      }

      // doc: ControlErrors.swift:56
      func fragment56() -> Task<Void, Never> {
        $save.run {
          guard isOnline else { throw ResetProcess() }
          try await api.save(draft)
        }
      }

      // doc: ControlErrors.swift:72
      func fragment72() -> Task<Void, Never> {
        $feed.load(interrupts: [.seconds(2), .seconds(8)]) {
          try await api.feed()
        } onInterrupt: { accumulatedDelay in
          if accumulatedDelay >= .seconds(10) { throw TimeoutError() }
          showSlowNetworkHint = true
        }
      }
    }
  }
}

// MARK: - States/LoadableState*.swift

extension DocExamples {
  @MainActor
  enum LoadableStateDocs {
    // doc: LoadableState+CustomDebugStringConvertible.swift:7
    @DocValues
    static func debugDescription7() -> [Any] {
      LoadableState<[Int]>.loaded([1, 2]).debugDescription  // "LoadableState.loaded([1, 2])"
      LoadableState<Int>.error(MyError()).debugDescription  // "LoadableState.error(MyError())"
      LoadableState<Int>.absent.debugDescription  // "LoadableState.absent"
    }

    // doc: LoadableState+Equatable.swift:8
    @DocValues
    static func equatable8() -> [Any] {
      LoadableState<Int>.loading == .loading  // true
      LoadableState<Int>.loaded(1) == .loading  // false
      LoadableState<Int>.error(TimeoutError()) == .error(TimeoutError())  // true
    }

    // doc: LoadableState.swift:6
    static func loadableState6() async -> LoadableState<[Post]> {
      var feed: LoadableState<[Post]> = .absent

      feed.setLoading()
      do {
        feed.setValue(try await api.feed())
      } catch {
        feed.setError(error)
      }

      if let posts = feed.data { render(posts) }
      return feed
    }

    // doc: LoadableState.swift:25
    @DocValues
    static func loadableState25() -> [Any] {
      LoadableState<Int>.error(TimeoutError()) == .error(TimeoutError())  // true
      LoadableState<Int>.error(TimeoutError()) == .error(CancelLoadable())  // false
    }

    // doc: LoadableState.swift:48
    static func loadableState48(feed: inout LoadableState<[Post]>) {
      feed.setAbsent()  // feed == .absent
    }

    // doc: LoadableState.swift:57
    static func loadableState57(feed: inout LoadableState<[Post]>) {
      feed.setLoading()  // feed == .loading
    }

    // doc: LoadableState.swift:66
    static func loadableState66(feed: inout LoadableState<[Post]>) {
      feed.setError(TimeoutError())  // feed.error is TimeoutError
    }

    // doc: LoadableState.swift:77
    static func loadableState77(numbers: inout LoadableState<[Int]>) {
      numbers.setValue([1, 2, 3])  // numbers == .loaded([1, 2, 3])
    }

    // doc: LoadableState.swift:112
    static func loadableState112(feed: LoadableState<[Post]>) {
      if let error = feed.error { showAlert(for: error) }
    }

    // doc: LoadableState.swift:121
    static func loadableState121(numbers: LoadableState<[Int]>) -> Int {
      let count = numbers.data?.count ?? 0
      return count
    }

    // doc: LoadableState.swift:137
    static func loadableState137() -> LoadableState<Int> {
      let numbers: LoadableState<[Int]> = .loaded([1, 2, 3])
      let count = numbers.map(\.count)  // .loaded(3)
      return count
    }

    // doc: LoadableState.swift:159
    static func loadableState159() -> LoadableState<Post> {
      let posts: LoadableState<[Post]> = .loaded([])
      let newest = posts.compactMap(\.first)  // .absent
      return newest
    }
  }
}

// MARK: - States/ProcessState*.swift and SingleProcess.swift

extension DocExamples {
  @MainActor
  enum ProcessStateDocs {
    // doc: ProcessState+CustomDebugStringConvertible.swift:7
    @DocValues
    static func debugDescription7() -> [Any] {
      ProcessState<String>.running("save").debugDescription
      // "ProcessState.running(\"save\")"
      SingleProcessState.failed(process: SingleProcess(id: "a"), error: MyError()).debugDescription
      // "ProcessState.failed(process: SingleProcess(id: \"a\"), error: MyError())"
    }

    // doc: ProcessState+Equatable.swift:8
    @DocValues
    static func equatable8() -> [Any] {
      ProcessState<Int>.running(1) == .running(1)  // true
      ProcessState<Int>.running(1) == .finished(1)  // false
    }

    // doc: ProcessState+SingleProcess.swift:4
    static func singleProcess4() -> SingleProcessState {
      var save: SingleProcessState = .idle
      save.start()  // .running(SingleProcess(#n)), a fresh process
      return save
    }

    // doc: ProcessState.swift:10 (its first line; a result builder cannot hold a type declaration)
    enum Action: Equatable, Sendable { case save, delete }

    // doc: ProcessState.swift:10 (the rest)
    @DocValues
    static func processState10() -> [Any] {
      var action: ProcessState<Action> = .idle
      action.start(.save)  // .running(.save)
      action.fail(with: TimeoutError())  // .failed(process: .save, error: TimeoutError())
      action.isRunning(.save)  // false
      action.hasFailed(.save)  // true
    }

    // doc: ProcessState.swift:41
    @DocValues
    static func processState41() -> [Any] {
      var save: SingleProcessState = .idle
      save.start()
      save.finish()
      save.hasFinished  // true
    }

    // doc: ProcessState.swift:54
    static func processState54(action: inout ProcessState<Action>) {
      action.start(.save)  // .running(.save)
    }

    // doc: ProcessState.swift:65
    static func processState65(action: inout ProcessState<Action>) {
      action.start(.save)
      action.finish()  // .finished(.save)
      action.finish()  // still .finished(.save)
    }

    // doc: ProcessState.swift:77
    static func processState77(action: inout ProcessState<Action>) {
      action.start(.save)
      action.fail(with: TimeoutError())  // .failed(process: .save, error: TimeoutError())
    }

    // doc: ProcessState.swift:108
    static func processState108(action: inout ProcessState<Action>) {
      action.setFailed(.delete, error: TimeoutError())  // .failed(process: .delete, error: TimeoutError())
    }

    // doc: ProcessState.swift:154
    static func processState154(action: ProcessState<Action>) {
      if let process = action.process { log("last action: \(process)") }
    }

    // doc: ProcessState.swift:173 (`…` replaced by an empty action)
    static func processState173(action: ProcessState<Action>) -> Button {
      Button("Save") {}.disabled(action.isRunning(.save))
    }

    // doc: SingleProcess.swift:7
    @DocValues
    static func singleProcess7() -> [Any] {
      let first = SingleProcess()
      let second = SingleProcess()
      first == second  // false: two distinct processes
      SingleProcess(id: "save") == SingleProcess(id: "save")  // true: same chosen identity
    }

    // doc: SingleProcess.swift:37
    static func singleProcess37() -> SingleProcessState {
      var save: SingleProcessState = .idle
      save.start(SingleProcess())  // the same as save.start()
      return save
    }

    // doc: SingleProcess.swift:54
    @DocValues
    static func singleProcess54() -> [Any] {
      SingleProcess(id: "1") == SingleProcess(id: "1")  // true
      SingleProcess(id: "1") == SingleProcess(id: "2")  // false
    }
  }
}

// MARK: - Wrappers/Loadable.swift and LoadableController.swift

extension DocExamples {
  @MainActor
  enum LoadableDocs {
    // doc: Loadable.swift:7
    @MainActor
    final class NumbersModel {
      @Loadable var numbers: LoadableState<[Int]>

      func refresh() {
        $numbers.load {
          try await Task.sleep(for: .milliseconds(10))
          return [1, 2, 3]
        }
      }
    }

    // doc corrected (the source now shows this form): LoadableController.swift:8 — in the `async` context that its `await` line needs, a bare
    // `$numbers.load { … }` picks the `async` overload and does not compile ("expression is 'async' but is not marked
    // with 'await'"); the Task-returning lines name their type, as the paragraph below the example says to.
    static func loadableController8() async -> LoadableState<[Int]> {
      @Loadable var numbers: LoadableState<[Int]>

      let task: Task<Void, Never> = $numbers.load { try await api.numbers() }  // a Task; the state follows it
      let yielding: Task<Void, Never> = $numbers.load { yield in  // several states from one load
        yield(.loaded([1]))
        yield(.loaded([1, 2]))
      }
      await $numbers.load { try await api.numbers() }  // waits for the load to end
      $numbers.cancel()
      $numbers.reset()  // cancels and sets .absent

      await task.value
      await yielding.value
      return numbers
    }

    /// The owner of `$numbers` in the fragments.
    @MainActor
    final class Fragments {
      @Loadable var numbers: LoadableState<[Int]>

      // doc: LoadableController.swift:47
      func fragment47() -> Task<Void, Never> {
        $numbers.load { try await api.numbers() }
      }

      // doc: LoadableController.swift:70
      func fragment70() -> Task<Void, Never> {
        $numbers.load { yield in
          for try await page in api.pages() { yield(.loaded(page)) }
        }
      }

      // doc: LoadableController.swift:98
      func fragment98() -> Task<Void, Never> {
        $numbers.load(interrupts: [.seconds(10)]) {
          try await api.numbers()
        } onInterrupt: { _ in
          throw TimeoutError()  // .error(TimeoutError())
        }
      }

      // doc: LoadableController.swift:129
      func fragment129() -> Task<Void, Never> {
        $numbers.load(interrupts: [.seconds(2)]) { yield in
          yield(.loaded(try await api.cached()))
          yield(.loaded(try await api.fresh()))
        } onInterrupt: { _ in
          print("still loading…")
        }
      }

      // doc: LoadableController.swift:162
      func fragment162() async {
        await $numbers.load { try await api.numbers() }
      }

      // doc: LoadableController.swift:179
      func fragment179() async {
        await $numbers.load { yield in yield(.loaded([1])) }
      }

      // doc: LoadableController.swift:196
      func fragment196() async {
        await $numbers.load(interrupts: [.seconds(5)]) {
          try await api.numbers()
        } onInterrupt: { _ in
          throw TimeoutError()
        }
      }

      // doc: LoadableController.swift:221
      func fragment221() async {
        await $numbers.load(interrupts: [.seconds(1)]) { yield in
          yield(.loaded(try await api.numbers()))
        } onInterrupt: { delay in
          print("waited", delay)
        }
      }

      // doc: LoadableController.swift:248
      func fragment248() {
        $numbers.cancel()
      }

      // doc: LoadableController.swift:258
      func fragment258() {
        $numbers.reset()
      }

      // doc: LoadableController.swift:270 (then one more load, so that there is a history)
      func fragment270() async -> [LoadableState<[Int]>] {
        var history: [LoadableState<[Int]>] = []
        let token = $numbers.observe { history.append($0) }

        await $numbers.load { [4, 5] }
        token.cancel()
        return history
      }

      // doc: LoadableController.swift:285
      func fragment285() async {
        for await state in $numbers.states {
          if state.isLoaded { break }
        }
      }
    }
  }
}

// MARK: - Wrappers/Process.swift and ProcessController.swift

extension DocExamples {
  @MainActor
  enum ProcessDocs {
    // doc: Process.swift:7
    enum Action: Equatable, Sendable { case save, delete }

    @MainActor
    final class EditorModel {
      @Process var action: ProcessState<Action>
      @Process var upload  // a SingleProcessState

      func save() {
        $action.run(.save) { try await Task.sleep(for: .milliseconds(10)) }
      }
    }

    // doc corrected (the source now shows this form): ProcessController.swift:8 — as in LoadableController.swift:8, the bare Task-form
    // `$action.run(.save) { … }` and `$upload.run { … }` do not compile in the `async` context that the
    // `await $action.run(.delete)` line needs; they name their type here.
    static func processController8() async -> ProcessState<Action> {
      @Process var action: ProcessState<Action>
      @Process var upload

      let saving: Task<Void, Never> = $action.run(.save) { try await api.save() }
      let uploading: Task<Void, Never> = $upload.run { try await api.upload() }  // SingleProcess
      await $action.run(.delete) { try await api.delete() }
      $action.cancel()
      $action.reset()  // cancels and sets .idle

      await saving.value
      await uploading.value
      #expect(upload.hasFinished)
      return action
    }

    /// The owner of `$action` and `$upload` in the fragments.
    @MainActor
    final class Fragments {
      @Process var action: ProcessState<Action>
      @Process var upload

      // doc: ProcessController.swift:41
      func fragment41() -> Task<Void, Never> {
        $action.run(.save) { try await api.save() }
      }

      // doc: ProcessController.swift:66
      func fragment66() -> Task<Void, Never> {
        $action.run(.save, interrupts: [.seconds(10)]) {
          try await api.save()
        } onInterrupt: { _ in
          throw TimeoutError()
        }
      }

      // doc: ProcessController.swift:99
      func fragment99() async {
        await $action.run(.save) { try await api.save() }
      }

      // doc: ProcessController.swift:118
      func fragment118() async {
        await $action.run(.save, interrupts: [.seconds(10)]) {
          try await api.save()
        } onInterrupt: { _ in
          throw TimeoutError()
        }
      }

      // doc: ProcessController.swift:147
      func fragment147() {
        $action.cancel()
      }

      // doc: ProcessController.swift:157
      func fragment157() {
        $action.reset()
      }

      // doc: ProcessController.swift:169 (then one run, to see it print)
      func fragment169() async {
        let token = $action.observe { print($0) }
        await $action.run(.delete) {}
        token.cancel()
      }

      // doc: ProcessController.swift:183
      func fragment183() async {
        for await state in $action.states where state.hasFinished { break }
      }

      // doc: ProcessController.swift:217
      func fragment217() -> Task<Void, Never> {
        $upload.run(interrupts: [.seconds(30)]) {
          try await api.upload()
        } onInterrupt: { _ in
          throw TimeoutError()
        }
      }

      // doc: ProcessController.swift:248
      func fragment248() async {
        await $upload.run { try await api.upload() }
      }

      // doc: ProcessController.swift:262
      func fragment262() async {
        await $upload.run(interrupts: [.seconds(30)]) {
          try await api.upload()
        } onInterrupt: { _ in
          throw TimeoutError()
        }
      }
    }

    // doc: ProcessController.swift:195 (returns the controller, which keeps the state alive)
    static func processController195() -> ProcessController<SingleProcess> {
      @Process var upload
      $upload.run { try await api.upload() }
      return $upload
    }
  }
}

// MARK: - Processed.docc/GettingStarted.md

extension DocExamples {
  @MainActor
  enum GettingStartedDocs {
    /// The article's `fetchNumbers()`, which the other examples call.
    static func fetchNumbers() async throws -> [Int] {
      // doc: GettingStarted.md:10
      func fetchNumbers() async throws -> [Int] {
        try await Task.sleep(for: .milliseconds(10))
        return [1, 2, 3]
      }

      return try await fetchNumbers()
    }

    static func fetchPage(_ page: Int) async throws -> [Int] { [page] }

    static func save() async throws {}

    struct DeleteError: Error, Equatable {}

    /// Fails, as the article's comment `.failed(process: .delete, error: …)` shows.
    static func delete() async throws { throw DeleteError() }

    // doc: GettingStarted.md:22
    @MainActor
    final class NumbersViewModel {
      @Loadable var numbers: LoadableState<[Int]>

      func refresh() {
        $numbers.load { try await fetchNumbers() }
      }
    }

    // doc: GettingStarted.md:38
    static func gettingStarted38(model: NumbersViewModel) {
      switch model.numbers {
      case .absent: showPlaceholder()
      case .loading: showSpinner()
      case .error(let error): show(error)
      case .loaded(let numbers): show(numbers)
      }
    }

    /// The owner of `$numbers` in the fragments.
    @MainActor
    final class Fragments {
      @Loadable var numbers: LoadableState<[Int]>

      // doc: GettingStarted.md:51
      func refreshAndWait() async {
        await $numbers.load { try await fetchNumbers() }  // returns when the load ends

        let task: Task<Void, Never> = $numbers.load { try await fetchNumbers() }  // returns at once
        await task.value
      }

      // doc: GettingStarted.md:67
      func fragment67() -> Task<Void, Never> {
        $numbers.load { yield in
          var items: [Int] = []
          for page in 1...3 {
            items += try await fetchPage(page)
            yield(.loaded(items))
          }
        }
      }

      // doc: GettingStarted.md:83
      func fragment83() {
        $numbers.cancel()  // still .loading; the result never arrives
        $numbers.reset()  // .absent

        $numbers.load {
          guard isSignedIn else { throw ResetLoadable() }  // back to .absent
          return try await fetchNumbers()
        }
      }

      // doc: GettingStarted.md:98
      func fragment98() -> Task<Void, Never> {
        $numbers.load(interrupts: [.seconds(2), .seconds(8)]) {
          try await fetchNumbers()
        } onInterrupt: { accumulatedDelay in
          if accumulatedDelay >= .seconds(10) {
            throw TimeoutError()  // .error(TimeoutError())
          }
          print("still loading after", accumulatedDelay)  // 2 seconds
        }
      }

      // doc: GettingStarted.md:146 (returns the tokens, which keep the observation alive)
      func fragment146() -> Set<ObservationToken> {
        var tokens = Set<ObservationToken>()
        $numbers.observe { state in print(state) }.store(in: &tokens)
        return tokens
      }

      // doc: GettingStarted.md:171
      func fragment171() async {
        for await state in $numbers.states {
          if state.isLoaded { break }
        }
      }
    }

    // doc: GettingStarted.md:115 (returns the controller, which keeps the state alive)
    static func gettingStarted115() -> ProcessController<SingleProcess> {
      @Process var saving  // a SingleProcessState

      $saving.run { try await save() }  // .running(SingleProcess(#n)), then .finished(SingleProcess(#n))
      return $saving
    }

    // doc: GettingStarted.md:123 (returns whether the delete failed, read later, and what reports the state's changes)
    static func gettingStarted123() -> (deleteFailed: @MainActor () -> Bool, changes: Wake) {
      enum Action: Equatable, Sendable { case save, delete }

      @Process var action: ProcessState<Action>

      $action.run(.save) { try await save() }  // .running(.save), then .finished(.save)
      $action.run(.delete) { try await delete() }  // .running(.delete), then .failed(process: .delete, error: …)

      if action.isRunning(.delete) { showDeleteSpinner() }
      return ({ action.hasFailed(.delete) }, .changes(of: $action))
    }

    // doc: GettingStarted.md:155 (then a write to each observed property)
    static func gettingStarted155() -> Set<ObservationToken> {
      var tokens = Set<ObservationToken>()

      @MainActor
      final class NumbersViewModel: ObservableModel {
        let observers = ObserverRegistry()
        @Loadable var numbers: LoadableState<[Int]>
        @Observed var query = ""
      }

      let model = NumbersViewModel()
      model.observe(\.numbers) { state in print("numbers:", state) }.store(in: &tokens)
      model.observe(\.query) { query in print("query:", query) }.store(in: &tokens)

      model.query = "swift"
      model.numbers = .loaded([1])
      return tokens
    }

    // doc: GettingStarted.md:182 (then a refresh)
    static func gettingStarted182() -> Set<ObservationToken> {
      var tokens = Set<ObservationToken>()

      @MainActor
      final class ViewModel: ObservableModel, LoadableSupport, ProcessSupport {
        enum ProcessKind: Equatable, Sendable { case saving, deleting }

        let observers = ObserverRegistry()
        var numbers: LoadableState<[Int]> = .absent
        var process: ProcessState<ProcessKind> = .idle

        func refresh() {
          load(\.numbers) { try await fetchNumbers() }
        }

        func save() {
          run(\.process, as: .saving) { try await persist() }
        }

        func stop() {
          cancel(\.numbers)
          reset(\.process)
        }

        func fetchNumbers() async throws -> [Int] { [1, 2, 3] }
        func persist() async throws {}
      }

      let model = ViewModel()
      model.observe(\.numbers) { state in print(state) }.store(in: &tokens)

      model.refresh()
      return tokens
    }
  }
}

// MARK: - Processed.docc/Processed.md

extension DocExamples {
  @MainActor
  enum ProcessedDocs {
    // doc: Processed.md:15 (its `import Processed` is at the top of this file; the class is declared here, because a
    // local class cannot reach the `api` stub, and the statements run in `processed15()`)
    @MainActor
    final class NumbersViewModel: ObservableModel {
      let observers = ObserverRegistry()
      @Loadable var numbers: LoadableState<[Int]>
      @Process var saving

      func refresh() {
        $numbers.load { try await api.numbers() }  // .loading, then .loaded([…]) or .error(…)
      }

      func save() {
        $saving.run { try await api.save() }  // .running, then .finished or .failed
      }
    }

    // doc: Processed.md:15 (the statements; returns the model and the token, which keep the load and the observation)
    static func processed15() -> (NumbersViewModel, ObservationToken) {
      let model = NumbersViewModel()
      let token = model.observe(\.numbers) { state in print(state) }
      model.refresh()
      return (model, token)
    }
  }
}

// MARK: - Processed.docc/TestingWithObservers.md
// The article's `import Processed` and `import Testing` are at the top of this file; its free `@Test` functions sit in
// suites, one file each, in TestingWithObservers/ (NumbersTests, RecorderTests, GateTests, ModelTests, DocTimeoutTests).

extension DocExamples {
  enum TestingWithObserversDocs {
    // doc: TestingWithObservers.md:21
    struct NetworkError: Error, Equatable {}

    /// A model whose `@Loadable var feed` loads on its own, for the fragment below.
    @MainActor
    final class FeedModel {
      @Loadable var feed: LoadableState<[String]>

      init() {
        $feed.load { ["first"] }
      }
    }

    // doc: TestingWithObservers.md:190
    @MainActor
    static func testingWithObservers190(model: FeedModel) async {
      for await state in model.$feed.states where state.isLoaded { break }
    }
  }
}

// MARK: - Tests

/// The recorder the testing article uses, used by the tests below as well.
private typealias DocRecorder<Value: Sendable> = StateRecorder<Value>

/// Runs the examples above and checks what their comments promise. Serialized: the stubs are shared.
@MainActor
@Suite(.serialized) struct DocExamplesTests {
  init() {
    DocExamples.resetStubs()
  }

  // MARK: LoadableSupport

  @Test func loadableSupportClass() async {
    let model = DocExamples.LoadableSupportDocs.NumbersViewModel()
    model.refresh()
    await until(.changes(of: model.loadables.numbers)) { model.numbers == .loaded([1, 2, 3]) }
    #expect(model.numbers == .loaded([1, 2, 3]))
  }

  @Test func loadableSupportFragments() async {
    typealias Fragments = DocExamples.LoadableSupportDocs.Fragments
    let loaded: [LoadableState<[Int]>] = [.loading, .loaded([1, 2, 3])]

    func history(_ body: (Fragments) async -> Void) async -> [LoadableState<[Int]>] {
      let model = Fragments()
      let recorder = DocRecorder(model, \.numbers)
      await body(model)
      return recorder.values
    }

    #expect(await history { await $0.fragment46().value } == loaded)
    #expect(await history { await $0.fragment70().value } == [.loading, .loaded([0]), .loaded([1, 2, 3])])
    #expect(await history { await $0.fragment98().value } == loaded)
    #expect(await history { await $0.fragment131().value } == loaded)
    #expect(await history { await $0.fragment167() } == loaded)
    #expect(await history { await $0.fragment187() } == [.loading, .loaded([1])])
    #expect(await history { await $0.fragment207() } == loaded)
    #expect(await history { await $0.fragment236() } == loaded)
    #expect(DocExamples.printed.isEmpty)  // the loads end long before their interrupts

    let cancelled = await history { model in
      let task = model.fragment46()
      model.fragment267()
      await task.value
      #expect(model.numbers == .loading)
    }
    #expect(cancelled == [.loading])

    let reset = await history { model in
      let task = model.fragment46()
      model.fragment281()
      await task.value
    }
    #expect(reset == [.loading, .absent])
  }

  // MARK: ProcessSupport

  @Test func processSupportClass() async {
    let model = DocExamples.ProcessSupportDocs.EditorViewModel()
    model.save()
    model.startUpload()
    await until(.changes(of: model.processes.action), .changes(of: model.processes.upload)) {
      model.action == .finished(.save) && model.upload.hasFinished
    }
    #expect(model.action == .finished(.save))
    #expect(model.upload.hasFinished)
  }

  @Test func processSupportFragments() async {
    typealias Fragments = DocExamples.ProcessSupportDocs.Fragments
    let saved: [ProcessState<Fragments.Action>] = [.running(.save), .finished(.save)]

    func actions(_ body: (Fragments) async -> Void) async -> [ProcessState<Fragments.Action>] {
      let model = Fragments()
      let recorder = DocRecorder(model, \.action)
      await body(model)
      return recorder.values
    }

    func uploads(_ body: (Fragments) async -> Void) async -> [SingleProcessState] {
      let model = Fragments()
      let recorder = DocRecorder(model, \.upload)
      await body(model)
      return recorder.values
    }

    func isOneUpload(_ history: [SingleProcessState]) -> Bool {
      guard history.count == 2, case .running(let process) = history[0] else { return false }
      return history[1] == .finished(process)
    }

    #expect(await actions { await $0.fragment37().value } == saved)
    #expect(await actions { await $0.fragment63().value } == saved)
    #expect(isOneUpload(await uploads { await $0.fragment98().value }))
    #expect(isOneUpload(await uploads { await $0.fragment122().value }))
    #expect(await actions { await $0.fragment159() } == saved)
    #expect(await actions { await $0.fragment181() } == saved)
    #expect(isOneUpload(await uploads { await $0.fragment212() }))
    #expect(isOneUpload(await uploads { await $0.fragment232() }))

    let cancelled = await actions { model in
      let task = model.fragment37()
      model.fragment263()
      await task.value
    }
    #expect(cancelled == [.running(.save)])

    let reset = await actions { model in
      let task = model.fragment37()
      model.fragment279()
      await task.value
    }
    #expect(reset == [.running(.save), .idle])
  }

  // MARK: Observation

  @Test func observableModelPrintsEachState() async {
    let token = DocExamples.ObservationDocs.observableModel10()
    await until(.signal(DocExamples.printing)) { DocExamples.printed.count == 2 }
    #expect(DocExamples.printed == ["LoadableState.loading", #"LoadableState.loaded(["first", "second"])"#])
    token.cancel()
  }

  @Test func observerLogsErrors() async {
    let model = DocExamples.ObservationDocs.FeedModel()
    var tokens = Set<ObservationToken>()
    DocExamples.ObservationDocs.observableModel37(model: model, tokens: &tokens)

    await model.load(\.feed) { ["fine"] }
    #expect(DocExamples.logged.isEmpty)
    await model.load(\.feed) { throw DocExamples.MyError() }
    #expect(DocExamples.logged == ["MyError()"])
    tokens.removeAll()
  }

  @Test func didSetNotifiesObservers() {
    let model = DocExamples.ObservationDocs.QueryModel()
    let recorder = DocRecorder(model, \.query)
    model.query = "swift"
    model.query = "swiftly"
    #expect(recorder.values == ["swift", "swiftly"])
  }

  @Test func removingTheTokensStopsObserving() {
    let model = DocExamples.ObservationDocs.NumbersModel()
    DocExamples.ObservationDocs.observationToken7(model: model)
    model.numbers = .loaded([1])
    #expect(DocExamples.printed.isEmpty)
  }

  @Test func storedTokenKeepsObserving() async {
    let model = DocExamples.ObservationDocs.NumbersModel()
    var tokens = Set<ObservationToken>()
    model.observationToken41(tokens: &tokens)
    await model.$numbers.load { [7] }
    #expect(DocExamples.printed == ["LoadableState.loading", "LoadableState.loaded([7])"])
    tokens.removeAll()
  }

  @Test func observedPropertyNotifies() {
    let token = DocExamples.ObservationDocs.observed3()
    #expect(DocExamples.printed == ["query is now swift"])
    token.cancel()
  }

  @Test func registryOwnerLoads() async {
    let profile = DocExamples.ObservationDocs.Profile()
    let recorder = DocRecorder(profile, \.avatar)
    await profile.load(\.avatar) { [1, 2] }
    #expect(recorder.values == [.loading, .loaded([1, 2])])
  }

  // MARK: Control errors

  @Test func controlErrors() async {
    typealias Fragments = DocExamples.ControlErrorsDocs.Fragments
    let posts = [DocExamples.Post(title: "first")]

    // CancelLoadable: the state stays as it is.
    let cancelled = Fragments()
    DocExamples.isSignedIn = false
    await cancelled.fragment8().value
    #expect(cancelled.feed == .loading)
    DocExamples.isSignedIn = true
    await cancelled.fragment8().value
    #expect(cancelled.feed == .loaded(posts))

    // ResetLoadable: back to .absent.
    let reset = Fragments()
    DocExamples.session.user = nil
    await reset.fragment24().value
    #expect(reset.feed == .absent)
    DocExamples.session.user = DocExamples.User(name: "ada")
    await reset.fragment24().value
    #expect(reset.feed == .loaded([DocExamples.Post(title: "for ada")]))

    // CancelProcess: the process stays running.
    let unchanged = Fragments()
    DocExamples.hasChanges = false
    await unchanged.fragment40().value
    #expect(unchanged.save.isRunning)
    DocExamples.hasChanges = true
    await unchanged.fragment40().value
    #expect(unchanged.save.hasFinished)

    // ResetProcess: back to .idle.
    let offline = Fragments()
    DocExamples.isOnline = false
    await offline.fragment56().value
    #expect(offline.save.isIdle)
    DocExamples.isOnline = true
    await offline.fragment56().value
    #expect(offline.save.hasFinished)

    // TimeoutError: the load ends before its first interrupt.
    let timed = Fragments()
    await timed.fragment72().value
    #expect(timed.feed == .loaded(posts))
    #expect(!DocExamples.showSlowNetworkHint)
  }

  // MARK: LoadableState

  @Test func loadableStateValues() async {
    typealias Docs = DocExamples.LoadableStateDocs
    typealias Post = DocExamples.Post

    #expect(
      Docs.debugDescription7() as? [String] == [
        "LoadableState.loaded([1, 2])", "LoadableState.error(MyError())", "LoadableState.absent",
      ])
    #expect(Docs.equatable8() as? [Bool] == [true, false, true])
    #expect(Docs.loadableState25() as? [Bool] == [true, false])

    #expect(await Docs.loadableState6() == .loaded([Post(title: "first")]))
    #expect(DocExamples.rendered == [[Post(title: "first")]])

    var feed: LoadableState<[Post]> = .loading
    Docs.loadableState48(feed: &feed)
    #expect(feed == .absent)
    Docs.loadableState57(feed: &feed)
    #expect(feed == .loading)
    Docs.loadableState66(feed: &feed)
    #expect(feed.error is TimeoutError)

    var numbers: LoadableState<[Int]> = .absent
    Docs.loadableState77(numbers: &numbers)
    #expect(numbers == .loaded([1, 2, 3]))

    Docs.loadableState112(feed: .loaded([]))
    #expect(DocExamples.alerts.isEmpty)
    Docs.loadableState112(feed: .error(TimeoutError()))
    #expect(DocExamples.alerts == ["TimeoutError()"])

    #expect(Docs.loadableState121(numbers: .loaded([1, 2, 3])) == 3)
    #expect(Docs.loadableState121(numbers: .loading) == 0)
    #expect(Docs.loadableState137() == .loaded(3))
    #expect(Docs.loadableState159() == .absent)
  }

  // MARK: ProcessState and SingleProcess

  @Test func processStateValues() {
    typealias Docs = DocExamples.ProcessStateDocs

    #expect(
      Docs.debugDescription7() as? [String] == [
        #"ProcessState.running("save")"#,
        #"ProcessState.failed(process: SingleProcess(id: "a"), error: MyError())"#,
      ])
    #expect(Docs.equatable8() as? [Bool] == [true, false])

    let started = Docs.singleProcess4()
    #expect(started.isRunning)
    #expect(started.process?.id.hasPrefix("#") == true)

    #expect(Docs.processState10() as? [Bool] == [false, true])
    #expect(Docs.processState41() as? [Bool] == [true])

    var action: ProcessState<Docs.Action> = .idle
    Docs.processState54(action: &action)
    #expect(action == .running(.save))
    Docs.processState65(action: &action)
    #expect(action == .finished(.save))
    Docs.processState77(action: &action)
    #expect(action == .failed(process: .save, error: TimeoutError()))
    Docs.processState108(action: &action)
    #expect(action == .failed(process: .delete, error: TimeoutError()))

    Docs.processState154(action: .idle)
    #expect(DocExamples.logged.isEmpty)
    Docs.processState154(action: .finished(.save))
    #expect(DocExamples.logged == ["last action: save"])

    let idleButton = Docs.processState173(action: .idle)
    #expect(idleButton.title == "Save" && !idleButton.isDisabled)
    #expect(Docs.processState173(action: .running(.save)).isDisabled)

    #expect(Docs.singleProcess7() as? [Bool] == [false, true])
    #expect(Docs.singleProcess37().isRunning)
    #expect(Docs.singleProcess54() as? [Bool] == [true, false])
  }

  // MARK: Loadable and LoadableController

  @Test func loadableWrapper() async {
    let model = DocExamples.LoadableDocs.NumbersModel()
    model.refresh()
    await until(.changes(of: model.$numbers)) { model.numbers == .loaded([1, 2, 3]) }
    #expect(model.numbers == .loaded([1, 2, 3]))

    #expect(await DocExamples.LoadableDocs.loadableController8() == .absent)
  }

  @Test func loadableControllerFragments() async {
    typealias Fragments = DocExamples.LoadableDocs.Fragments
    let loaded: [LoadableState<[Int]>] = [.loading, .loaded([1, 2, 3])]

    func history(_ body: (Fragments) async -> Void) async -> [LoadableState<[Int]>] {
      let holder = Fragments()
      let recorder = DocRecorder(holder.$numbers)
      await body(holder)
      return recorder.values
    }

    #expect(await history { await $0.fragment47().value } == loaded)
    #expect(await history { await $0.fragment70().value } == [.loading, .loaded([1]), .loaded([1, 2])])
    #expect(await history { await $0.fragment98().value } == loaded)
    #expect(await history { await $0.fragment129().value } == [.loading, .loaded([0]), .loaded([1, 2, 3])])
    #expect(await history { await $0.fragment162() } == loaded)
    #expect(await history { await $0.fragment179() } == [.loading, .loaded([1])])
    #expect(await history { await $0.fragment196() } == loaded)
    #expect(await history { await $0.fragment221() } == loaded)
    #expect(DocExamples.printed.isEmpty)  // the loads end long before their interrupts

    let cancelled = await history { holder in
      let task = holder.fragment47()
      holder.fragment248()
      await task.value
    }
    #expect(cancelled == [.loading])

    let reset = await history { holder in
      let task = holder.fragment47()
      holder.fragment258()
      await task.value
    }
    #expect(reset == [.loading, .absent])

    #expect(await Fragments().fragment270() == [.loading, .loaded([4, 5])])

    let waiting = Fragments()
    let task = waiting.fragment47()
    await waiting.fragment285()
    #expect(waiting.numbers == .loaded([1, 2, 3]))
    await task.value
  }

  // MARK: Process and ProcessController

  @Test func processWrapper() async {
    let model = DocExamples.ProcessDocs.EditorModel()
    model.save()
    await until(.changes(of: model.$action)) { model.action == .finished(.save) }
    #expect(model.action == .finished(.save))
    #expect(model.upload == .idle)

    #expect(await DocExamples.ProcessDocs.processController8() == .idle)
  }

  @Test func processControllerFragments() async {
    typealias Fragments = DocExamples.ProcessDocs.Fragments
    typealias Action = DocExamples.ProcessDocs.Action
    let saved: [ProcessState<Action>] = [.running(.save), .finished(.save)]

    func history(_ body: (Fragments) async -> Void) async -> [ProcessState<Action>] {
      let holder = Fragments()
      let recorder = DocRecorder(holder.$action)
      await body(holder)
      return recorder.values
    }

    #expect(await history { await $0.fragment41().value } == saved)
    #expect(await history { await $0.fragment66().value } == saved)
    #expect(await history { await $0.fragment99() } == saved)
    #expect(await history { await $0.fragment118() } == saved)

    let cancelled = await history { holder in
      let task = holder.fragment41()
      holder.fragment147()
      await task.value
    }
    #expect(cancelled == [.running(.save)])

    let reset = await history { holder in
      let task = holder.fragment41()
      holder.fragment157()
      await task.value
    }
    #expect(reset == [.running(.save), .idle])

    await Fragments().fragment169()
    let delete = String(reflecting: Action.delete)
    #expect(DocExamples.printed == ["ProcessState.running(\(delete))", "ProcessState.finished(\(delete))"])

    let waiting = Fragments()
    let task = waiting.fragment41()
    await waiting.fragment183()
    #expect(waiting.action == .finished(.save))
    await task.value

    let uploads = Fragments()
    await uploads.fragment217().value
    #expect(uploads.upload.hasFinished)
    uploads.upload = .idle
    await uploads.fragment248()
    #expect(uploads.upload.hasFinished)
    uploads.upload = .idle
    await uploads.fragment262()
    #expect(uploads.upload.hasFinished)

    let upload = DocExamples.ProcessDocs.processController195()
    #expect(upload.state.isRunning)
    await until(.changes(of: upload)) { upload.state.hasFinished }
    #expect(upload.state.hasFinished)
  }

  // MARK: GettingStarted.md

  @Test func gettingStartedLoads() async throws {
    typealias Docs = DocExamples.GettingStartedDocs

    #expect(try await Docs.fetchNumbers() == [1, 2, 3])

    let model = Docs.NumbersViewModel()
    Docs.gettingStarted38(model: model)
    model.refresh()
    Docs.gettingStarted38(model: model)
    await until(.changes(of: model.$numbers)) { model.numbers.isLoaded }
    Docs.gettingStarted38(model: model)
    model.numbers = .error(TimeoutError())
    Docs.gettingStarted38(model: model)
    #expect(DocExamples.shown == ["placeholder", "spinner", "[1, 2, 3]", "TimeoutError()"])

    let waiting = Docs.Fragments()
    await waiting.refreshAndWait()
    #expect(waiting.numbers == .loaded([1, 2, 3]))

    let pages = Docs.Fragments()
    let pagesRecorder = DocRecorder(pages.$numbers)
    await pages.fragment67().value
    #expect(pagesRecorder.values == [.loading, .loaded([1]), .loaded([1, 2]), .loaded([1, 2, 3])])

    // Cancel keeps .loading, reset writes .absent, and the signed-out load resets again.
    let signedOut = Docs.Fragments()
    let signedOutRecorder = DocRecorder(signedOut.$numbers)
    DocExamples.isSignedIn = false
    let running = signedOut.fragment67()
    signedOut.fragment83()
    await running.value
    try await signedOutRecorder.wait(forCount: 4)
    #expect(signedOutRecorder.values == [.loading, .absent, .loading, .absent])

    DocExamples.isSignedIn = true
    let signedIn = Docs.Fragments()
    signedIn.fragment83()
    await until(.changes(of: signedIn.$numbers)) { signedIn.numbers.isLoaded }
    #expect(signedIn.numbers == .loaded([1, 2, 3]))

    let timed = Docs.Fragments()
    await timed.fragment98().value
    #expect(timed.numbers == .loaded([1, 2, 3]))
    #expect(DocExamples.printed.isEmpty)  // the load ends long before its first interrupt
  }

  @Test func gettingStartedProcesses() async {
    typealias Docs = DocExamples.GettingStartedDocs

    let saving = Docs.gettingStarted115()
    await until(.changes(of: saving)) { saving.state.hasFinished }
    #expect(saving.state.hasFinished)

    let (deleteFailed, actionChanges) = Docs.gettingStarted123()
    #expect(DocExamples.shown == ["delete spinner"])
    await until(actionChanges) { deleteFailed() }
    #expect(deleteFailed())
  }

  @Test func gettingStartedObservation() async {
    typealias Docs = DocExamples.GettingStartedDocs

    let holder = Docs.Fragments()
    var tokens = holder.fragment146()
    await holder.$numbers.load { [9] }
    #expect(DocExamples.printed == ["LoadableState.loading", "LoadableState.loaded([9])"])
    tokens.removeAll()

    DocExamples.printed = []
    tokens = Docs.gettingStarted155()
    #expect(DocExamples.printed == ["query: swift", "numbers: LoadableState.loaded([1])"])

    let waiting = Docs.Fragments()
    let task = waiting.fragment67()
    await waiting.fragment171()
    #expect(waiting.numbers.isLoaded)
    await task.value

    DocExamples.printed = []
    tokens = Docs.gettingStarted182()
    await until(.signal(DocExamples.printing)) { DocExamples.printed.count == 2 }
    #expect(DocExamples.printed == ["LoadableState.loading", "LoadableState.loaded([1, 2, 3])"])
    tokens.removeAll()
  }

  // MARK: Processed.md

  @Test func overviewExample() async {
    let (model, token) = DocExamples.ProcessedDocs.processed15()
    await until(.signal(DocExamples.printing)) { DocExamples.printed.count == 2 }
    #expect(DocExamples.printed == ["LoadableState.loading", "LoadableState.loaded([1, 2, 3])"])

    model.save()
    await until(.changes(of: model.$saving)) { model.saving.hasFinished }
    #expect(model.saving.hasFinished)
    token.cancel()
  }

  // MARK: TestingWithObservers.md

  @Test func waitingForAStateThroughStates() async {
    let model = DocExamples.TestingWithObserversDocs.FeedModel()
    await DocExamples.TestingWithObserversDocs.testingWithObservers190(model: model)
    #expect(model.feed == .loaded(["first"]))
  }
}

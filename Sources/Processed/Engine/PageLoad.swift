/// What `loadMore` adds to the one engine: its plan, its options and whether a call starts, joins or does nothing.
///
/// A `loadMore` is a load of the state whose block fetches the next page and returns the list with the page appended.
/// It starts silently and keeps the list on a failure (as a refresh of a loaded value does), so latest-wins,
/// cancellation, retry, timeout, the limiter and the activity hold for it unchanged. See
/// Documentation/LoadPhases.md, "Paged lists".
@MainActor
enum PageLoad {
  /// How a `loadMore` call goes on, decided from its state's current load.
  enum Step {
    /// Nothing to do: another load of the state is in progress, or there is no next page.
    case nothing
    /// A `loadMore` is in progress: the call waits for it.
    case join(FirstSignal<Bool>)
    /// Start the plan.
    case start
  }

  /// The plan of a `loadMore` of a state that is `current`: `nil` unless it is `.loaded` with a next cursor.
  ///
  /// The items are appended to those of `current`: every other write to the state supersedes the `loadMore`, so the
  /// list it appends to is still the one on screen when it ends.
  static func plan<Item, Cursor>(
    after current: LoadableState<Pages<Item, Cursor>>,
    _ block: @escaping @MainActor (Cursor) async throws -> Pages<Item, Cursor>
  ) -> LoadPlan<LoadableState<Pages<Item, Cursor>>>? {
    guard case .loaded(let pages) = current, let cursor = pages.nextCursor else { return nil }
    var plan = LoadPlan<LoadableState<Pages<Item, Cursor>>>.load(returning: { [items = pages.items] in
      let page = try await block(cursor)
      return Pages(items: items + page.items, nextCursor: page.nextCursor)
    })
    plan.appendsPage = true
    plan.pageRefill = PageRefill(block)
    return plan
  }

  /// The options of a `loadMore`: the call's, else the declaration's, without what does not apply to it (debounce,
  /// overlap and calm presentation).
  static func options(_ given: LoadOptions?, declared: LoadOptions.Resolved?) -> LoadOptions? {
    (given ?? declared?.options)?.forFetch
  }
}

extension StateHost {
  /// How a `loadMore` call on this host goes on: it joins a `loadMore` in progress (unless that one's task was
  /// cancelled: it can no longer write, and the call supersedes it), does nothing while any other load is in
  /// progress or when it has no plan, and starts otherwise.
  func loadMoreStep(hasPlan: Bool) -> PageLoad.Step {
    if tracker.isRunning, !(tracker.isLoadingMore && tracker.task?.isCancelled == true) {
      guard tracker.isLoadingMore else { return .nothing }
      return .join(tracker.join())
    }
    return hasPlan ? .start : .nothing
  }

  /// A `loadMore` call, Task form: `plan` is ``PageLoad/plan(after:_:)`` of the current state. Returns `nil` when the
  /// call does nothing.
  func startLoadMore(
    _ plan: LoadPlan<State>?, options: LoadOptions?, priority: TaskPriority?, currentState: State? = nil
  ) -> Task<Void, Never>? {
    if case .some(let hooked) = loadMoreThroughHook(plan, options: options, priority: priority) { return hooked }
    return loadMoreTask(hasPlan: plan != nil, priority: priority) {
      guard let plan else { return nil }
      return start(
        plan, silently: true, options: PageLoad.options(options, declared: declaredOptions), priority: priority,
        currentState: currentState, refreshing: true)
    }
  }

  /// The task of a `loadMore` call (see ``loadMoreStep(hasPlan:)``): `nil` when it does nothing, a task that ends with
  /// the `loadMore` it joins, or what `start` starts.
  func loadMoreTask(
    hasPlan: Bool, priority: TaskPriority?, starting start: () -> Task<Void, Never>?
  ) -> Task<Void, Never>? {
    switch loadMoreStep(hasPlan: hasPlan) {
    case .nothing: nil
    case .join(let ended): Task(priority: priority) { await LoadJoin.wait(until: ended) }
    case .start: start()
    }
  }

  /// A `loadMore` call, `async` form. Returns `nil` when the call does nothing.
  func startAwaitedLoadMore(_ plan: LoadPlan<State>?, options: LoadOptions?, currentState: State? = nil)
    -> AwaitedLoad?
  {
    if case .some(let hooked) = loadMoreThroughHook(plan, options: options, priority: nil) {
      return hooked.map { AwaitedLoad(task: $0, forwardsCancellation: true) }
    }
    switch loadMoreStep(hasPlan: plan != nil) {
    case .nothing:
      return nil
    case .join(let ended):
      return AwaitedLoad(task: Task { await LoadJoin.wait(until: ended) }, forwardsCancellation: true)
    case .start:
      guard let plan else { return nil }
      return startAwaited(
        plan, silently: true, options: PageLoad.options(options, declared: declaredOptions),
        currentState: currentState, refreshing: true)
    }
  }
}

import Testing

@testable import Processed

/// A model whose wrapped state is iterated with `states`.
@MainActor
private final class StreamedModel {
  @Loadable var numbers: LoadableState<[Int]> = .loaded([0])
}

/// `$x.states`: the current state first, then every change in order; it ends when the owner goes away.
@MainActor
@Suite struct StatesSequenceTests {
  @Test func yieldsTheCurrentStateFirst() async {
    @Loadable var count: LoadableState<Int> = .loaded(7)
    var first: LoadableState<Int>?
    for await state in $count.states {
      first = state
      break
    }
    #expect(first == .loaded(7))
  }

  @Test func yieldsEveryChangeInOrderWhileALoadRuns() async {
    let count = Loadable<Int>()
    let gate = Gate()
    let stream = count.projectedValue.states
    let collector = Task {
      var collected: [LoadableState<Int>] = []
      for await state in stream {
        collected.append(state)
        if collected.count == 6 { break }
      }
      return collected
    }
    let task: Task<Void, Never> = count.projectedValue.load { yield in
      yield(.loaded(1))
      await gate.wait()
      yield(.error(WrapperError(code: 1)))
      yield(.loaded(2))
    }
    await gate.untilWaiting(1)
    gate.open()
    await task.value
    count.wrappedValue = .loaded(3)
    let collected = await collector.value
    #expect(collected == [.absent, .loading, .loaded(1), .error(WrapperError(code: 1)), .loaded(2), .loaded(3)])
  }

  @Test func iteratingWhileLoadsRunSeesEachChange() async {
    let count = Loadable<Int>()
    let ready = WrapperLatch<Void>()
    let collector = Task {
      var collected: [LoadableState<Int>] = []
      for await state in count.projectedValue.states {
        collected.append(state)
        if collected.count == 1 { ready.fulfil() }
        if collected.count == 5 { break }
      }
      return collected
    }
    await ready.value()
    await count.projectedValue.load { 1 }
    count.projectedValue.reset()
    await count.projectedValue.load { yield in yield(.loaded(2)) }
    #expect(await collector.value == [.absent, .loading, .loaded(1), .absent, .loading])
  }

  @Test func processStatesYieldEveryChange() async {
    @Process var save
    let process = SingleProcess(id: "save")
    let stream = $save.states
    await $save.run(process) { throw WrapperError(code: 1) }
    $save.reset()
    var collected: [SingleProcessState] = []
    for await state in stream {
      collected.append(state)
      if collected.count == 4 { break }
    }
    #expect(collected == [.idle, .running(process), .failed(process: process, error: WrapperError(code: 1)), .idle])
  }

  @Test func twoSequencesEachSeeEveryChange() async {
    @Loadable var count: LoadableState<Int>
    let first = $count.states
    let second = $count.states
    await $count.load { 1 }
    var firstValues: [LoadableState<Int>] = []
    for await state in first {
      firstValues.append(state)
      if firstValues.count == 3 { break }
    }
    var secondValues: [LoadableState<Int>] = []
    for await state in second {
      secondValues.append(state)
      if secondValues.count == 3 { break }
    }
    #expect(firstValues == [.absent, .loading, .loaded(1)])
    #expect(secondValues == firstValues)
  }

  @Test func iteratingOffTheMainActorSeesEveryChange() async {
    let count = Loadable<Int>()
    let stream = count.projectedValue.states
    let collector = Task.detached {
      var collected: [LoadableState<Int>] = []
      for await state in stream {
        collected.append(state)
        if collected.count == 41 { break }
      }
      return collected
    }
    for value in 1...20 {
      await count.projectedValue.load { value }
    }
    let collected = await collector.value
    #expect(collected.count == 41)
    #expect(collected.first == .absent)
    #expect(Array(collected.dropFirst()) == (1...20).flatMap { [LoadableState<Int>.loading, .loaded($0)] })
  }

  // MARK: Ending

  @Test func endsWhenAStandaloneWrapperIsReleased() async {
    var count: Loadable<Int>? = Loadable()
    let stream = count!.projectedValue.states
    let iteration = Task {
      var received: [LoadableState<Int>] = []
      for await state in stream { received.append(state) }
      return received
    }
    await count!.projectedValue.load { 1 }
    count = nil
    // The iteration must end now that the storage is gone.
    #expect(await iteration.value == [.absent, .loading, .loaded(1)])
  }

  @Test func endsWhenTheOwningModelGoesAwayWhileALoadRuns() async {
    var model: StreamedModel? = StreamedModel()
    weak let weakModel = model
    let stream = model!.$numbers.states
    let started = WrapperLatch<Void>()
    let iteration = Task {
      var received: [LoadableState<[Int]>] = []
      for await state in stream { received.append(state) }
      return received
    }
    let task: Task<Void, Never> = model!.$numbers.load {
      started.fulfil()
      _ = await WrapperProbe.sleepUntilCancelled()
      return [1]
    }
    await started.value()
    model = nil
    #expect(weakModel == nil)
    await task.value
    #expect(await iteration.value == [.loaded([0]), .loading])
  }

  @Test func endsWhenALocalWrapperGoesOutOfScope() async {
    let iteration: Task<Int, Never>
    do {
      @Process var action: ProcessState<Int>
      let stream = $action.states
      iteration = Task {
        var count = 0
        for await _ in stream { count += 1 }
        return count
      }
      action = .running(1)
    }
    #expect(await iteration.value == 2)
  }

  @Test func endsWhenTheIteratingTaskIsCancelled() async {
    let count = Loadable<Int>()
    let iterating = Signal()  // fired once the sequence exists, and so its observer
    let iteration = Task {
      let states = count.projectedValue.states
      iterating.fire()
      var received = 0
      for await _ in states { received += 1 }
      return received
    }
    await until(.signal(iterating)) { count.storage.ownObserverCount == 1 }
    iteration.cancel()
    _ = await iteration.value
    // Cancelling the iteration terminated the sequence, whose termination removed the observer before the task ended.
    #expect(count.storage.ownObserverCount == 0)
  }
}

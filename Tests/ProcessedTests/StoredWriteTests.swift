import ProcessedTesting
import Testing

@testable import Processed

/// A model whose states are reached in every way a key path can reach one: a stored property, one with `didSet`, a
/// computed property, an optional's `!`, and a state inside a struct.
@MainActor
final class StoredWriteModel: ObservableModel, LoadableSupport {
  struct Leading {
    var state: LoadableState<Int> = .absent
    var flag = 0
  }

  struct Trailing {
    var flag = 0
    var state: LoadableState<Int> = .absent
  }

  let observers = ObserverRegistry()
  var numbers: LoadableState<Int> = .absent
  var watched: LoadableState<Int> = .absent {
    didSet { watchedWrites.append(watched) }
  }
  var watchedWrites: [LoadableState<Int>] = []
  var backing: LoadableState<Int> = .absent
  var computed: LoadableState<Int> {
    get { backing }
    set {
      computedWrites.append(newValue)
      backing = newValue
    }
  }
  var computedWrites: [LoadableState<Int>] = []
  var maybe: LoadableState<Int>? = .absent
  var leading = Leading()
  var trailing = Trailing()
}

/// A property that notifies by itself — but not for `.loaded(2)` — and turns `.loaded(3)` into `.loaded(30)`
/// without notifying.
@MainActor
final class SometimesNotifyingModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  var state: LoadableState<Int> = .absent {
    didSet {
      if state == .loaded(3) {
        state = .loaded(30)
        return
      }
      if state != .loaded(2) { notifyObservers(\.state) }
    }
  }
}

/// A class whose subclass is loaded through a key path rooted at it.
@MainActor
class StoredWriteBase {
  final var numbers: LoadableState<Int> = .absent
}

@MainActor
final class StoredWriteDerived: StoredWriteBase, LoadableSupport {
  var extra = 0
}

/// A class that is not final, and a subclass that overrides its state with a `didSet`.
@MainActor
class StoredWriteOpen: LoadableSupport {
  var numbers: LoadableState<Int> = .absent
}

@MainActor
final class StoredWriteOverriding: StoredWriteOpen {
  var writes: [LoadableState<Int>] = []
  override var numbers: LoadableState<Int> {
    didSet { writes.append(numbers) }
  }
}

/// A plain class: no registry, nobody observes.
@MainActor
final class StoredWritePlain: LoadableSupport {
  var count = 0
  var numbers: LoadableState<Int> = .absent
}

/// A load's writes go straight to a stored property once its first write showed that the key path is one (see
/// `StoredProperties`), and only then: every other kind of property keeps being written through its key path, with
/// its accessors run for every change. Either way, observers see every change once, in order.
@MainActor
@Suite struct StoredWriteTests {
  /// The offset the running load of `keyPath` writes at, `0` when it writes through the key path; `nil` when no
  /// load of it runs.
  func storedOffset<Model: AnyObject>(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, LoadableState<Int>>
  ) -> Int? {
    KeyPathHost.running(model, keyPath)?.access.storedOffset
  }

  /// Loads `keyPath` yielding 1, 2 and 3, and returns the offset the load wrote at after its first yield and the
  /// value the property held after each yield.
  func yieldThree<Model: LoadableSupport>(
    _ model: Model, _ keyPath: ReferenceWritableKeyPath<Model, LoadableState<Int>>
  ) async -> (offset: Int?, seen: [LoadableState<Int>]) {
    var offset: Int?
    var seen: [LoadableState<Int>] = []
    await model.load(keyPath) { yield in
      for value in 1...3 {
        yield(.loaded(value))
        if value == 1 { offset = storedOffset(model, keyPath) }
        seen.append(model[keyPath: keyPath])
      }
    }
    return (offset, seen)
  }

  @Test func aStoredPropertyIsWrittenInPlaceAndObserversSeeEveryChangeOnce() async {
    let model = StoredWriteModel()
    let recorder = StateRecorder(model, \.numbers)
    let (offset, seen) = await yieldThree(model, \.numbers)
    #expect(offset.map { $0 > 0 } == StoredProperties.isEnabled)  // off: PROCESSED_NO_STORED_WRITES
    #expect(seen == [.loaded(1), .loaded(2), .loaded(3)])
    #expect(recorder.values == [.loading, .loaded(1), .loaded(2), .loaded(3)])
    #expect(model.numbers == .loaded(3))
  }

  /// Loads `keyPath` yielding three states and checks that every write went through the property's accessors
  /// (which record what they were given in `writes`), not in place, and reached the observers once.
  func expectWrittenThroughAccessors(
    _ keyPath: ReferenceWritableKeyPath<StoredWriteModel, LoadableState<Int>>,
    recordedIn writes: KeyPath<StoredWriteModel, [LoadableState<Int>]>,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    let model = StoredWriteModel()
    let recorder = StateRecorder(model, keyPath)
    let (offset, seen) = await yieldThree(model, keyPath)
    let all: [LoadableState<Int>] = [.loading, .loaded(1), .loaded(2), .loaded(3)]
    #expect(offset == 0, sourceLocation: sourceLocation)
    #expect(seen == [.loaded(1), .loaded(2), .loaded(3)], sourceLocation: sourceLocation)
    #expect(model[keyPath: writes] == all, sourceLocation: sourceLocation)
    #expect(recorder.values == all, sourceLocation: sourceLocation)
  }

  @Test func aPropertyWithDidSetRunsItForEveryChange() async {
    await expectWrittenThroughAccessors(\.watched, recordedIn: \.watchedWrites)
  }

  @Test func aComputedPropertyRunsItsSetterForEveryChange() async {
    await expectWrittenThroughAccessors(\.computed, recordedIn: \.computedWrites)
  }

  @Test func anOptionalsUnwrappedStateIsWrittenThroughItsKeyPath() async {
    let model = StoredWriteModel()
    let (offset, seen) = await yieldThree(model, \.maybe!)
    // The state sits where the optional does, but it is not the optional: writing it in place would be wrong the
    // moment the optional is `nil`.
    #expect(offset == 0)
    #expect(seen == [.loaded(1), .loaded(2), .loaded(3)])
    #expect(model.maybe == .loaded(3))
  }

  @Test func aStateInsideAStructIsWrittenThroughItsKeyPath() async {
    let model = StoredWriteModel()
    let leading = await yieldThree(model, \.leading.state)
    let trailing = await yieldThree(model, \.trailing.state)
    #expect(leading.offset == 0)
    #expect(trailing.offset == 0)
    #expect(leading.seen == [.loaded(1), .loaded(2), .loaded(3)])
    #expect(trailing.seen == [.loaded(1), .loaded(2), .loaded(3)])
    #expect(model.leading.state == .loaded(3))
    #expect(model.trailing.state == .loaded(3))
    #expect(model.leading.flag == 0)
    #expect(model.trailing.flag == 0)
  }

  @Test func aSuperclassStoredPropertyIsWrittenInPlaceInASubclassInstance() async {
    let model = StoredWriteDerived()
    let (offset, seen) = await yieldThree(model, \.numbers)
    #expect(offset.map { $0 > 0 } == StoredProperties.isEnabled)  // off: PROCESSED_NO_STORED_WRITES
    #expect(seen == [.loaded(1), .loaded(2), .loaded(3)])
    #expect(model.extra == 0)
  }

  @Test func aPropertyASubclassCanOverrideRunsTheOverridesAccessors() async {
    // Loaded through the open class's key path: the same key path object reaches an overriding property.
    let open = StoredWriteOpen()
    let plain = await yieldThree(open, \StoredWriteOpen.numbers)
    #expect(plain.offset == 0)
    #expect(plain.seen == [.loaded(1), .loaded(2), .loaded(3)])
    let overriding = StoredWriteOverriding()
    let (offset, seen) = await yieldThree(overriding as StoredWriteOpen, \StoredWriteOpen.numbers)
    #expect(offset == 0)
    #expect(seen == [.loaded(1), .loaded(2), .loaded(3)])
    #expect(overriding.writes == [.loading, .loaded(1), .loaded(2), .loaded(3)])
  }

  @Test func aPlainClassIsWrittenInPlaceWithoutObservers() async {
    let model = StoredWritePlain()
    let (offset, seen) = await yieldThree(model, \.numbers)
    #expect(offset.map { $0 > 0 } == StoredProperties.isEnabled)  // off: PROCESSED_NO_STORED_WRITES
    #expect(seen == [.loaded(1), .loaded(2), .loaded(3)])
    #expect(model.count == 0)
    // Loaded again: the new load writes in place from its first write after `.loading`, and ends where it should.
    let again = await yieldThree(model, \.numbers)
    #expect(again.offset == offset)
    #expect(model.numbers == .loaded(3))
  }

  @Test func aResetFromAnObserverOfAnInPlaceWriteIsDeliveredAfterIt() async {
    let model = StoredWriteModel()
    // Registered first: it resets the state before the recorder, registered second, has seen `.loaded(1)`.
    let token = model.observe(\.numbers) { state in
      if state == .loaded(1) { model.reset(\.numbers) }
    }
    let recorder = StateRecorder(model, \.numbers)
    var offset: Int?
    var seen: [LoadableState<Int>] = []
    await model.load(\.numbers) { yield in
      for value in 0...2 {
        yield(.loaded(value))
        if value == 0 { offset = storedOffset(model, \.numbers) }
        seen.append(model.numbers)
      }
    }
    #expect(offset.map { $0 > 0 } == StoredProperties.isEnabled)  // off: PROCESSED_NO_STORED_WRITES
    // The reset's write is delivered once the delivery of `.loaded(1)` ends, and ends the load: `.loaded(2)` is
    // never written.
    #expect(recorder.values == [.loading, .loaded(0), .loaded(1), .absent])
    #expect(seen == [.loaded(0), .absent, .absent])
    #expect(model.numbers == .absent)
    withExtendedLifetime(token) {}
  }

  @Test func aPropertyThatStopsNotifyingByItselfStillDeliversWhatItHolds() async {
    let model = SometimesNotifyingModel()
    let recorder = StateRecorder(model, \.state)
    var settles: [Bool?] = []
    await model.load(\.state) { yield in
      for value in 1...3 {
        yield(.loaded(value))
        settles.append(KeyPathHost.running(model, \.state)?.access.settles)
      }
    }
    // Its first writes settle on their echo; then one has no echo, and one is normalised without one: each is read
    // back from the property.
    #expect(settles == [true, true, true])
    #expect(recorder.values == [.loading, .loaded(1), .loaded(2), .loaded(30)])
    #expect(model.state == .loaded(30))
  }

  @Test(.enabled(if: StoredProperties.isEnabled)) func onlyTheAddressOfAStoredPropertyOfTheStatesTypeIsFound() {
    let model = StoredWriteModel()
    let base = UInt(bitPattern: Unmanaged.passUnretained(model).toOpaque())
    let numbers = withUnsafeMutablePointer(to: &model.numbers) { UInt(bitPattern: $0) }
    let leading = withUnsafeMutablePointer(to: &model.leading) { UInt(bitPattern: $0) }
    let trailingFlag = withUnsafeMutablePointer(to: &model.trailing.flag) { UInt(bitPattern: $0) }
    var local = LoadableState<Int>.absent
    let stack = withUnsafeMutablePointer(to: &local) { UInt(bitPattern: $0) }

    let numbersOffset = StoredProperties.offset(of: numbers, in: model, as: LoadableState<Int>.self)
    #expect(numbersOffset == Int(numbers - base))
    // The same address asked for another type, a struct holding a state at its start, a field inside a struct, an
    // address outside the model, and the model's header.
    #expect(StoredProperties.offset(of: numbers, in: model, as: Int.self) == 0)
    #expect(StoredProperties.offset(of: leading, in: model, as: LoadableState<Int>.self) == 0)
    #expect(StoredProperties.offset(of: trailingFlag, in: model, as: Int.self) == 0)
    #expect(StoredProperties.offset(of: stack, in: model, as: LoadableState<Int>.self) == 0)
    #expect(StoredProperties.offset(of: base, in: model, as: LoadableState<Int>.self) == 0)
    // Asked again (the last answer is kept): the same answers.
    #expect(StoredProperties.offset(of: numbers, in: model, as: LoadableState<Int>.self) == numbersOffset)
    #expect(StoredProperties.offset(of: numbers, in: model, as: Int.self) == 0)
  }
}

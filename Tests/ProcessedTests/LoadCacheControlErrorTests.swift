import ProcessedTesting
import Testing

@testable import Processed

/// A control error thrown by an entry's fetch block acts on the states that wait for the fetch as it would on each
/// one's own load: `ResetLoadable` resets them (and so unbinds them), `CancelLoadable` leaves them as they are. The
/// entry keeps what it holds.
@MainActor
@Suite struct LoadCacheControlErrorTests {
  @MainActor
  final class Screen {
    @Loadable var number: LoadableState<Int>
  }

  let key = CacheKey<Int>("number")

  @Test func aMissWhoseBlockThrowsResetLoadableResetsTheStateAsAnUncachedLoadDoes() async {
    let cache = LoadCache()
    let (cached, plain) = (Screen(), Screen())
    let cachedHistory = StateRecorder(cached.$number)
    let plainHistory = StateRecorder(plain.$number)
    await cached.$number.load(key, in: cache) { throw ResetLoadable() }
    await plain.$number.load { throw ResetLoadable() }
    #expect(cachedHistory.values == [.loading, .absent])
    #expect(cachedHistory.values == plainHistory.values)
    #expect(cached.$number.activity.phase == .idle)
    #expect(cache.count == 0)  // unbound, and the entry holds nothing
    // The Task form too.
    let task: Task<Void, Never> = cached.$number.load(key, in: cache) { throw ResetLoadable() }
    await task.value
    #expect(cachedHistory.values == [.loading, .absent, .loading, .absent])
  }

  @Test func everyStateThatWaitedForTheFetchIsResetAndTheEntryKeepsItsValue() async {
    let cache = LoadCache()
    cache.set(1, for: key)
    cache.invalidate(key)
    let (first, second, bystander) = (Screen(), Screen(), Screen())
    await bystander.$number.load(CacheKey<Int>("other"), in: cache) { 9 }
    let gate = Gate()
    let a: Task<Void, Never> = first.$number.load(key, in: cache) {
      await gate.wait()
      throw ResetLoadable()
    }
    let b: Task<Void, Never> = second.$number.load(key, in: cache) { 2 }  // joins the fetch
    #expect(first.number == .loaded(1) && second.number == .loaded(1))  // the stale value at once
    await gate.untilWaiting(1)
    gate.open()
    await a.value
    await b.value
    #expect(first.number == .absent)
    #expect(second.number == .absent)
    #expect(bystander.number == .loaded(9))
    #expect(cache.value(for: key) == 1)
    // Both were unbound: a later write of the key reaches neither.
    cache.set(3, for: key)
    #expect(first.number == .absent && second.number == .absent)
  }

  @Test func cancelLoadableLeavesTheStatesAsTheyAreAndTheEntryAsItWas() async {
    let cache = LoadCache()
    let (cached, plain) = (Screen(), Screen())
    let cachedHistory = StateRecorder(cached.$number)
    let plainHistory = StateRecorder(plain.$number)
    await cached.$number.load(key, in: cache) { throw CancelLoadable() }
    await plain.$number.load { throw CancelLoadable() }
    #expect(cachedHistory.values == [.loading])
    #expect(cachedHistory.values == plainHistory.values)
    #expect(cached.$number.activity.phase == .idle)
    #expect(cache.value(for: key) == nil)
  }

  @Test func aPageBlockThrowingResetLoadableResetsTheStatesWaitingForThePage() async {
    typealias Feed = Pages<Int, Int>
    let feedKey = CacheKey<Feed>("feed")
    let cache = LoadCache(staleTime: .seconds(60))
    let (first, second) = (PagedFeedModel(), PagedFeedModel())
    await first.$feed.load(feedKey, in: cache) { LoadMoreTests.page(0) }
    await second.$feed.load(feedKey, in: cache) { LoadMoreTests.page(0) }
    await first.$feed.loadMore { _ in throw ResetLoadable() }
    #expect(first.feed == .absent)
    #expect(second.feed == .absent)  // it waited for the page as for any fetch of the key
    #expect(cache.value(for: feedKey) == LoadMoreTests.page(0))
    await first.$feed.load(feedKey, in: cache) { LoadMoreTests.page(0) }  // a fresh hit again
    await first.$feed.loadMore { _ in throw CancelLoadable() }
    #expect(first.feed == .loaded(LoadMoreTests.page(0)))
  }
}

import Testing

@testable import Processed

/// The key index: a map from keys of every `Value` type whose prefix queries match leading components, and whose
/// trie keeps only nodes on the way to a key.
@Suite struct CacheKeyIndexTests {
  @Test func storesReplacesAndRemovesElementsByKey() {
    var index = CacheKeyIndex<Int>()
    let key = CacheKey<Int>("posts", 1).erased
    index[key] = 10
    index[CacheKey<String>("posts", 1).erased] = 20
    #expect(index[key] == 10)
    #expect(index[CacheKey<Int>("posts", Int64(1)).erased] == 10)
    #expect(index[CacheKey<String>("posts", 1).erased] == 20)
    #expect(index[CacheKey<Int>("posts", 2).erased] == nil)
    #expect(index.count == 2)
    index[key] = 11
    #expect(index[key] == 11)
    #expect(index.count == 2)
    #expect(index.removeValue(forKey: key) == 11)
    #expect(index.removeValue(forKey: key) == nil)
    #expect(index[key] == nil)
    #expect(index.count == 1)
    #expect(index[CacheKey<String>("posts", 1).erased] == 20)
  }

  @Test func prefixMatchesLeadingComponentsOfKeysOfEveryValueType() {
    var index = CacheKeyIndex<Int>()
    let keys = [
      CacheKey<Int>("posts", 1).erased, CacheKey<Int>("posts", 2).erased,
      CacheKey<Int>("posts", 2, "comments").erased, CacheKey<String>("posts", 1).erased,
      CacheKey<Int>("users", 1).erased, CacheKey<Int>("posts").erased,
    ]
    for (number, key) in keys.enumerated() { index[key] = number }
    #expect(Set(index.keys(withPrefix: ["posts"])) == Set([keys[0], keys[1], keys[2], keys[3], keys[5]]))
    #expect(Set(index.keys(withPrefix: ["posts", 1])) == Set([keys[0], keys[3]]))
    #expect(Set(index.keys(withPrefix: ["posts", Int64(2)])) == Set([keys[1], keys[2]]))
    #expect(index.keys(withPrefix: ["posts", 2, "comments"]) == [keys[2]])
    #expect(index.keys(withPrefix: ["users", 2]).isEmpty)
    #expect(index.keys(withPrefix: ["comments"]).isEmpty)
    #expect(index.keys(withPrefix: [1]).isEmpty)
  }

  @Test func anEmptyPrefixMatchesEveryKey() {
    var index = CacheKeyIndex<Int>()
    #expect(index.keys(withPrefix: []).isEmpty)
    let keys = [CacheKey<Int>("a").erased, CacheKey<Bool>("b", 1).erased, CacheKey<Int>(7, 8, 9).erased]
    for key in keys { index[key] = 0 }
    let found = index.keys(withPrefix: [])
    #expect(found.count == 3)
    #expect(Set(found) == Set(keys))
  }

  @Test func aPrefixLongerThanAKeyDoesNotMatchIt() {
    var index = CacheKeyIndex<Int>()
    index[CacheKey<Int>("posts", 1).erased] = 0
    #expect(index.keys(withPrefix: ["posts", 1, "comments"]).isEmpty)
    #expect(index.keys(withPrefix: ["posts", 1]) == [CacheKey<Int>("posts", 1).erased])
  }

  @Test func aPrefixEndingAtANodeNoKeyEndsAtFindsTheKeysBelowIt() {
    var index = CacheKeyIndex<Int>()
    let below = [
      CacheKey<Int>("a", "b", "c").erased, CacheKey<Int>("a", "b", "d", "e").erased,
      CacheKey<String>("a", "b", "c").erased,
    ]
    for key in below { index[key] = 0 }
    index[CacheKey<Int>("a", "x").erased] = 0
    let found = index.keys(withPrefix: ["a", "b"])
    #expect(found.count == 3)
    #expect(Set(found) == Set(below))
  }

  @Test func keysFoundCarryTheirStoredComponentsNotThePrefixs() {
    var index = CacheKeyIndex<Int>()
    index[CacheKey<Int>("user", 1).erased] = 0
    index[CacheKey<Int>("user", 1, "avatar").erased] = 0
    let found = index.keys(withPrefix: ["user", Int64(1)])
    #expect(found.count == 2)
    #expect(found.allSatisfy { $0.components[1].base is Int })
  }

  @Test func removingEveryKeyLeavesOnlyTheRoot() {
    var index = CacheKeyIndex<Int>()
    #expect(index.keys(withPrefix: []).isEmpty)  // builds the trie
    #expect(index.nodeCount == 1)
    let keys = [
      CacheKey<Int>("posts", 1).erased, CacheKey<String>("posts", 1).erased,
      CacheKey<Int>("posts", 1, "comments").erased, CacheKey<Int>("posts", 2).erased, CacheKey<Int>("users").erased,
    ]
    for key in keys { index[key] = 0 }
    // root, posts, posts/1, posts/1/comments, posts/2, users
    #expect(index.nodeCount == 6)
    index[keys[2]] = nil
    #expect(index.nodeCount == 5)
    // Another Value type still ends at posts/1.
    index[keys[0]] = nil
    #expect(index.nodeCount == 5)
    #expect(index.keys(withPrefix: ["posts", 1]) == [keys[1]])
    index.removeValue(forKey: keys[1])
    #expect(index.nodeCount == 4)
    index[keys[3]] = nil
    index[keys[4]] = nil
    #expect(index.nodeCount == 1)
    #expect(index.count == 0)
    #expect(index.keys(withPrefix: []).isEmpty)
  }

  @Test func removingAKeyThatEndsAboveOthersKeepsTheirNodes() {
    var index = CacheKeyIndex<Int>()
    #expect(index.keys(withPrefix: []).isEmpty)  // builds the trie
    index[CacheKey<Int>("a").erased] = 0
    index[CacheKey<Int>("a", "b").erased] = 1
    index[CacheKey<Int>("a").erased] = nil
    #expect(index.nodeCount == 3)
    #expect(index.keys(withPrefix: ["a"]) == [CacheKey<Int>("a", "b").erased])
  }

  @Test func theTrieIsBuiltByTheFirstPrefixQueryFromTheKeysHeldThenAndKeptAfter() {
    var index = CacheKeyIndex<Int>()
    for number in 0..<10 { index[CacheKey<Int>("n", number).erased] = number }
    index[CacheKey<Int>("m").erased] = 0
    index[CacheKey<Int>("n", 9).erased] = nil
    // No query yet: no nodes.
    #expect(!index.hasTrie)
    #expect(index.nodeCount == 1)
    #expect(Set(index.keys(withPrefix: ["n"])) == Set((0..<9).map { CacheKey<Int>("n", $0).erased }))
    #expect(index.hasTrie)
    // root, m, n, n/0 … n/8
    #expect(index.nodeCount == 12)
    // Kept from there on: later insertions and removals reach it.
    index[CacheKey<Int>("n", 0).erased] = nil
    index[CacheKey<Int>("n", 20).erased] = 20
    #expect(
      Set(index.keys(withPrefix: ["n"]))
        == Set((1..<9).map { CacheKey<Int>("n", $0).erased } + [CacheKey<Int>("n", 20).erased]))
    #expect(index.keys(withPrefix: ["m"]) == [CacheKey<Int>("m").erased])
    #expect(index.nodeCount == 12)
    index.removeAll()
    #expect(!index.hasTrie)
  }

  @Test func removeAllEmptiesTheIndexAndItsTrie() {
    var index = CacheKeyIndex<Int>()
    for number in 0..<10 { index[CacheKey<Int>("n", number).erased] = number }
    index.removeAll()
    #expect(index.count == 0)
    #expect(index.nodeCount == 1)
    #expect(index.keys(withPrefix: ["n"]).isEmpty)
    #expect(index[CacheKey<Int>("n", 3).erased] == nil)
    index[CacheKey<Int>("n", 3).erased] = 3
    #expect(index.keys(withPrefix: ["n"]) == [CacheKey<Int>("n", 3).erased])
  }

  @Test func storageShrinksWhenMostKeysAreRemoved() {
    var index = CacheKeyIndex<Int>()
    #expect(index.keys(withPrefix: []).isEmpty)  // builds the trie
    for number in 0..<1_000 { index[CacheKey<Int>("n", number).erased] = number }
    // The elements and the children of "n" have room for 1,000 keys each.
    #expect(index.storageCapacity >= 2_000)
    for number in 10..<1_000 { index[CacheKey<Int>("n", number).erased] = nil }
    #expect(index.storageCapacity < 200)
    #expect(Set(index.keys(withPrefix: ["n"])) == Set((0..<10).map { CacheKey<Int>("n", $0).erased }))
    #expect((0..<10).allSatisfy { index[CacheKey<Int>("n", $0).erased] == $0 })
  }

  @Test func aSparseDictionaryMovesToSmallerStorageKeepingItsContents() {
    var dictionary = Dictionary(uniqueKeysWithValues: (0..<1_000).map { ($0, $0) })
    dictionary.shrinkIfSparse()
    let full = dictionary.capacity
    #expect(full >= 1_000)
    // More than an eighth of the room is used: it stays.
    for key in (full / 8 + 1)..<1_000 { dictionary[key] = nil }
    dictionary.shrinkIfSparse()
    #expect(dictionary.capacity == full)
    for key in 5...(full / 8) { dictionary[key] = nil }
    dictionary.shrinkIfSparse()
    #expect(dictionary.capacity < 64)
    #expect(dictionary == [0: 0, 1: 1, 2: 2, 3: 3, 4: 4])
  }

  @Test func iteratesEveryKeyAndElement() {
    var index = CacheKeyIndex<Int>()
    for number in 0..<5 { index[CacheKey<Int>("n", number).erased] = number * 10 }
    index[CacheKey<Int>("n", 2).erased] = nil
    var seen: [AnyCacheKey: Int] = [:]
    index.forEach { seen[$0] = $1 }
    #expect(seen == [0, 1, 3, 4].reduce(into: [:]) { $0[CacheKey<Int>("n", $1).erased] = $1 * 10 })
    #expect(index.values.sorted() == [0, 10, 30, 40])
  }

  /// 20,000 random sets, removals, lookups and prefix queries (5,000 under the thread sanitizer, where each scan is
  /// slow) against a dictionary whose prefix query scans every key; the trie keeps exactly one node per distinct
  /// leading components of a key, plus the root.
  @Test func randomOperationsMatchADictionaryThatScansForPrefixes() async throws {
    var random = KeyIndexSplitMix64(seed: 0x5EED_CAC4E)
    var index = CacheKeyIndex<Int>()
    var model: [AnyCacheKey: Int] = [:]
    var queriesWithMatches = 0
    let steps = keyPathThreadSanitizerIsActive ? 5_000 : 20_000
    for step in 0..<steps {
      let operation = Int.random(in: 0..<100, using: &random)
      if operation < 45 {
        let key = Self.randomKey(using: &random)
        index[key] = step
        model[key] = step
      } else if operation < 70 {
        let key = Self.randomKey(using: &random)
        if Bool.random(using: &random) {
          try #require(index.removeValue(forKey: key) == model.removeValue(forKey: key))
        } else {
          index[key] = nil
          model[key] = nil
        }
      } else if operation < 80 {
        let key = Self.randomKey(using: &random)
        try #require(index[key] == model[key])
      } else {
        let prefix = Self.randomComponents(count: Int.random(in: 0...4, using: &random), using: &random)
        let expected = model.keys.filter { $0.components.starts(with: prefix) }
        let found = index.keys(withPrefix: prefix)
        try #require(found.count == expected.count)
        try #require(Set(found) == Set(expected))
        if !expected.isEmpty { queriesWithMatches += 1 }
      }
      try #require(index.count == model.count)
      // Long under a sanitizer: lets the tests that run beside it have the thread now and then.
      if step % 100 == 99 { await Task.yield() }
      if step % 1_000 == 999 { try Self.requireSameContents(index, model) }
    }
    #expect(queriesWithMatches > steps / 20)
    for key in model.keys.shuffled(using: &random) {
      index[key] = nil
    }
    #expect(index.count == 0)
    #expect(index.nodeCount == 1)
  }

  private static func requireSameContents(_ index: CacheKeyIndex<Int>, _ model: [AnyCacheKey: Int]) throws {
    var contents: [AnyCacheKey: Int] = [:]
    index.forEach { contents[$0] = $1 }
    try #require(contents == model)
    var prefixes = Set<[AnyHashable]>()
    for key in model.keys {
      for length in 1...key.components.count { prefixes.insert(Array(key.components.prefix(length))) }
    }
    try #require(index.nodeCount == prefixes.count + 1)
  }

  /// A key of one to three components, of one of three `Value` types, from a small alphabet so that keys share
  /// prefixes and repeat.
  private static func randomKey(using random: inout KeyIndexSplitMix64) -> AnyCacheKey {
    let components = randomComponents(count: Int.random(in: 1...3, using: &random), using: &random)
    let storage = CacheKeyComponents(components)
    let valueTypes: [Any.Type] = [Int.self, String.self, [Int].self]
    return AnyCacheKey(valueType: valueTypes[Int.random(in: 0..<3, using: &random)], storage: storage)
  }

  /// Components from {"a", "b", 1, 2}, the integers as `Int` or `Int64` at random (they are the same component).
  private static func randomComponents(count: Int, using random: inout KeyIndexSplitMix64) -> [AnyHashable] {
    (0..<count).map { _ in
      switch Int.random(in: 0..<4, using: &random) {
      case 0: AnyHashable("a")
      case 1: AnyHashable("b")
      case let number: Bool.random(using: &random) ? AnyHashable(number - 1) : AnyHashable(Int64(number - 1))
      }
    }
  }
}

/// SplitMix64: a seeded generator, so that a failing run repeats.
private struct KeyIndexSplitMix64: RandomNumberGenerator {
  var state: UInt64
  init(seed: UInt64) { state = seed }

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var mixed = state
    mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
    mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
    return mixed ^ (mixed >> 31)
  }
}

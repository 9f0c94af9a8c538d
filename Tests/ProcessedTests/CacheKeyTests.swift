import Testing

@testable import Processed

/// Keys: equal when their `Value` types are the same and their components are equal in order, compared as
/// `AnyHashable`; never by hash value or description; written as `CacheKey<V>(c1, c2, …)`.
@Suite struct CacheKeyTests {
  @Test func keysWithEqualComponentsInOrderAreEqualAndHashAlike() {
    let key = CacheKey<Int>("posts", 42)
    #expect(key == CacheKey<Int>("posts", 42))
    #expect(key.hashValue == CacheKey<Int>("posts", 42).hashValue)
    #expect(Set([key, CacheKey<Int>("posts", 42)]).count == 1)
    #expect(key != CacheKey<Int>("posts", 43))
    #expect(key != CacheKey<Int>("posts"))
    #expect(key != CacheKey<Int>("posts", 42, "comments"))
  }

  @Test func orderOfComponentsMatters() {
    #expect(CacheKey<Int>("a", "b") != CacheKey<Int>("b", "a"))
    #expect(CacheKey<Int>(1, 2) != CacheKey<Int>(2, 1))
    #expect(CacheKey<Int>(1, 2).erased != CacheKey<Int>(2, 1).erased)
  }

  @Test func integersOfDifferentTypesWithTheSameValueAreTheSameComponent() {
    let key = CacheKey<String>("user", 1)
    for component: any Hashable & Sendable in [Int64(1), UInt8(1), Int32(1)] {
      let other = CacheKey<String>("user", component)
      #expect(key == other)
      #expect(key.hashValue == other.hashValue)
      #expect(key.erased == other.erased)
      #expect(key.erased.hashValue == other.erased.hashValue)
    }
    #expect([key.erased: "found"][CacheKey<String>("user", Int64(1)).erased] == "found")
    #expect(key != CacheKey<String>("user", Int64(2)))
  }

  @Test func erasedKeysOfDifferentValueTypesDifferEvenWithEqualComponents() {
    let intKey = CacheKey<Int>("a").erased
    let stringKey = CacheKey<String>("a").erased
    #expect(intKey != stringKey)
    #expect(intKey.components == stringKey.components)
    #expect(Set([intKey, stringKey, CacheKey<Int>("a").erased]).count == 2)
    #expect(CacheKey<[Int]>("a", 1).erased != CacheKey<[Int]?>("a", 1).erased)
    // The same type however it is spelled.
    #expect(CacheKey<[Int]>("a", 1).erased == CacheKey<Array<Int>>("a", 1).erased)
  }

  @Test func equalityIsNotDerivedFromDescriptionsOrHashValues() {
    // Equal descriptions, different values.
    #expect(CacheKey<Int>(Named("x")).description == CacheKey<Int>("x").description)
    #expect(CacheKey<Int>(Named("x")) != CacheKey<Int>("x"))
    #expect(CacheKey<Int>("1") != CacheKey<Int>(1))
    // Equal hash values, different values.
    #expect(Colliding(1).hashValue == Colliding(2).hashValue)
    #expect(CacheKey<Int>(Colliding(1)) != CacheKey<Int>(Colliding(2)))
    #expect(CacheKey<Int>(Colliding(1)) == CacheKey<Int>(Colliding(1)))
    #expect(Set([CacheKey<Int>(Colliding(1)), CacheKey<Int>(Colliding(2))]).count == 2)
  }

  @Test func descriptionWritesTheValueTypeAndEachComponent() {
    #expect(CacheKey<Int>("count", 7).description == "CacheKey<Int>(count, 7)")
    #expect(CacheKey<[String]>("posts", 42).description == "CacheKey<Array<String>>(posts, 42)")
    #expect(CacheKey<String?>("x").description == "CacheKey<Optional<String>>(x)")
    #expect(CacheKey<Int>("user", Int64(1), Named("me")).description == "CacheKey<Int>(user, 1, me)")
    #expect("\(CacheKey<Bool>(true))" == "CacheKey<Bool>(true)")
  }

  @Test func componentsKeepTheirOrderAndValues() {
    let key = CacheKey<Int>("posts", 42, Named("n"))
    #expect(key.components == [AnyHashable("posts"), AnyHashable(42), AnyHashable(Named("n"))])
    #expect(key.erased.components == key.components)
    #expect(key.components[1].base is Int)
  }

  @Test func aComponentNotEqualToItselfMakesAKeyThatNoOtherKeyEquals() {
    let key = CacheKey<Int>("ratio", Double.nan)
    let again = CacheKey<Int>("ratio", Double.nan)
    #expect(key != again)
    #expect([key.erased: 1][again.erased] == nil)
    #expect(CacheKey<Int>("ratio", 0.5) == CacheKey<Int>("ratio", 0.5))
  }
}

extension CacheKeyTests {
  /// A key of one or two components keeps them in place and the cache stores them in an array: both forms name the
  /// same entry, and a fresh hit's comparison of the two (`matches`) agrees with `==` for every length.
  @Test func keysKeptInPlaceAndAsStoredAgreeForEveryLength() {
    let keys: [CacheKey<Int>] = [
      CacheKey("a"), CacheKey("a", 1), CacheKey("a", Int64(1)), CacheKey("a", 2), CacheKey("b", 1),
      CacheKey("a", 1, "c"), CacheKey("a", 1, "c", 4), CacheKey(1), CacheKey(1, "a"), CacheKey("a", Named("x")),
    ]
    for key in keys {
      let stored = key.erased
      #expect(stored.storage.items.count == key.components.count)
      for other in keys {
        #expect(other.storage.matches(stored.storage) == (other == key), "\(other) against \(key)")
        #expect((other.erased == stored) == (other == key))
        if other == key { #expect(other.erased.hashValue == stored.hashValue) }
      }
    }
    // A key built in place finds the entry stored for an equal key.
    var table: [AnyCacheKey: Int] = [:]
    for (index, key) in keys.enumerated() where table[key.erased] == nil { table[key.erased] = index }
    #expect(table[CacheKey<Int>("a", Int8(1)).erased] == 1)
    #expect(table[CacheKey<Int>("a", 1, "c").erased] == 5)
    #expect(CacheKey<Int>("a", 1).description == "CacheKey<Int>(a, 1)")
  }
}

extension CacheKeyTests {
  /// The one- and two-component initializers read their components' static types; the variadic one takes
  /// existentials. Every way of spelling a key names the same entry, as `AnyHashable` compares the components.
  @Test func staticallyTypedAndExistentialComponentsMakeTheSameKey() {
    let some: Int? = 1
    let none: Int? = nil
    let typed: [CacheKey<Int>] = [
      CacheKey("a"), CacheKey("a", 1), CacheKey("a", Int64(1)), CacheKey("a", some), CacheKey("a", none),
      CacheKey("a", "b"), CacheKey(Named("n"), 2), CacheKey(7),
    ]
    let components: [[any Hashable & Sendable]] = [
      ["a"], ["a", 1], ["a", Int64(1)], ["a", some], ["a", none], ["a", "b"], [Named("n"), 2], [7],
    ]
    for (key, parts) in zip(typed, components) {
      let boxed = parts.count == 1 ? CacheKey<Int>(parts[0]) : CacheKey<Int>(parts[0], parts[1])
      #expect(key == boxed, "\(key)")
      #expect(key.hashValue == boxed.hashValue)
      #expect(key.erased == boxed.erased)
      #expect(key.storage.matches(boxed.erased.storage))
      #expect(key.components == parts.map { AnyHashable($0) })
    }
    // Equal exactly when the components' `AnyHashable`s are.
    #expect((CacheKey<Int>("a", some) == CacheKey<Int>("a", 1)) == (AnyHashable(some) == AnyHashable(1)))
    #expect(CacheKey<Int>("a", none) != CacheKey<Int>("a", 1))
    #expect(CacheKey<Int>("a", none) == CacheKey<Int>("a", Int?.none))
  }
}

/// A component whose description is its name, so that it describes like a `String` without being one.
private struct Named: Hashable, Sendable, CustomStringConvertible {
  let name: String
  init(_ name: String) { self.name = name }
  var description: String { name }
}

/// A component whose values all hash alike.
private struct Colliding: Hashable, Sendable {
  let value: Int
  init(_ value: Int) { self.value = value }
  func hash(into hasher: inout Hasher) { hasher.combine(0) }
}

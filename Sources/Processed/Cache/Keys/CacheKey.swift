/// The key of one value in a `LoadCache`: the type of the value and a list of components.
///
/// A key names what it holds: `CacheKey<[Post]>("posts", 42)` is the key of a user's posts. Two keys are equal when
/// their `Value` types are the same and their components are equal, in order; components compare as `AnyHashable`
/// does, so `1` and `Int64(1)` are the same component. A key is never derived from a `hashValue` or a description.
/// Keys of different `Value` types never name the same entry, even with equal components.
///
/// Give keys a home in an extension, so that every screen spells a key the same way:
///
/// ```swift
/// extension CacheKey where Value == [Post] {
///   static func posts(of user: User.ID) -> Self { CacheKey("posts", user) }
/// }
///
/// $posts.load(.posts(of: user.id), in: cache) { try await api.posts(of: user.id) }
/// cache.invalidate(prefix: "posts")  // every key whose first component is "posts"
/// ```
///
/// Order the components from the most general to the most specific: the cache's `invalidate(prefix:)` matches
/// the leading components of keys of every `Value` type.
///
/// A component that is not equal to itself (such as `Double.nan`) makes a key that no other key equals, not even
/// one built from the same components: its value can be written but not found again with a new key.
public struct CacheKey<Value: Sendable>: Hashable, Sendable, CustomStringConvertible {
  /// The components, in order; never empty.
  @usableFromInline let storage: CacheKeyParts
  /// How a persisted key (``persisted()``) is stored; `nil` for a key that is not. Equality and hashing ignore it.
  @usableFromInline var persistence: KeyPersistence<Value>?

  /// Creates a key of one component.
  ///
  /// ```swift
  /// let key = CacheKey<Settings>("settings")
  /// ```
  ///
  /// - Parameter first: The component.
  @inlinable
  public init(_ first: some Hashable & Sendable) {
    storage = .one(CacheKeyComponent(first))
  }

  /// Creates a key of two components, from the more general to the more specific. The same key as the variadic
  /// initializer makes from them; this one reads its components' types statically (a screen building its key in
  /// each call pays no existential boxing).
  ///
  /// ```swift
  /// let key = CacheKey<[Post]>("posts", 42)
  /// ```
  ///
  /// - Parameters:
  ///   - first: The first component.
  ///   - second: The second component.
  @inlinable
  public init(_ first: some Hashable & Sendable, _ second: some Hashable & Sendable) {
    storage = .two(CacheKeyComponent(first), CacheKeyComponent(second))
  }

  /// Creates a key from its components, in order, from the most general to the most specific.
  ///
  /// ```swift
  /// let key = CacheKey<[Post]>("posts", 42, "page", 2)
  /// print(key)  // CacheKey<Array<Post>>(posts, 42)
  /// ```
  ///
  /// - Parameters:
  ///   - first: The first component.
  ///   - rest: The components after it.
  @inlinable
  public init(_ first: some Hashable & Sendable, _ rest: any Hashable & Sendable...) {
    // One or two components are kept in place (no allocation); more in an array of the exact size.
    switch rest.count {
    case 0: storage = .one(CacheKeyComponent(first))
    case 1: storage = .two(CacheKeyComponent(first), CacheKeyComponent(rest[0]))
    default:
      storage = .many(
        CacheKeyComponents(items: [CacheKeyComponent(first)] + rest.map { CacheKeyComponent($0) }))
    }
  }

  /// The key written as `CacheKey<Value>(c1, c2, …)`, each component as `String(describing:)` writes it.
  ///
  /// ```swift
  /// CacheKey<Int>("count", 7).description  // "CacheKey<Int>(count, 7)"
  /// ```
  public var description: String {
    let components = storage.components.items.map { String(describing: $0.anyHashable.base) }
    return "CacheKey<\(String(describing: Value.self))>(\(components.joined(separator: ", ")))"
  }

  /// The components, in order, as they compare.
  var components: [AnyHashable] { storage.components.values }

  /// The key with its `Value` type as data, for a dictionary holding keys of every type.
  @inlinable var erased: AnyCacheKey { AnyCacheKey(valueType: Value.self, storage: storage.components) }

  /// Equal when the components are equal, in order; persistence is ignored.
  @inlinable
  public static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.storage == rhs.storage
  }

  /// Hashes the components; persistence is ignored.
  @inlinable
  public func hash(into hasher: inout Hasher) {
    hasher.combine(storage)
  }
}

/// A ``CacheKey`` of any `Value` type: the type's identity and the components.
///
/// Equal exactly when the typed keys are: same `Value` type, equal components in order.
@usableFromInline
struct AnyCacheKey: Hashable, Sendable, CustomStringConvertible {
  /// The identity of the key's `Value` type.
  @usableFromInline let valueType: ObjectIdentifier
  /// The components, in order.
  @usableFromInline let storage: CacheKeyComponents

  @usableFromInline
  init(valueType: Any.Type, storage: CacheKeyComponents) {
    self.valueType = ObjectIdentifier(valueType)
    self.storage = storage
  }

  init(valueType: ObjectIdentifier, storage: CacheKeyComponents) {
    self.valueType = valueType
    self.storage = storage
  }

  /// The components, in order, as they compare.
  var components: [AnyHashable] { storage.values }

  @usableFromInline var description: String {
    "AnyCacheKey(\(storage.values.map { String(describing: $0.base) }.joined(separator: ", ")))"
  }
}

/// A key's components, compared and hashed as `AnyHashable` compares and hashes them (see ``CacheKeyComponent``).
@usableFromInline
struct CacheKeyComponents: Hashable, Sendable {
  /// Never mutated after it is stored (an index's edges share it).
  @usableFromInline let items: [CacheKeyComponent]

  @inlinable
  init(items: [CacheKeyComponent]) {
    self.items = items
  }

  /// Components given as `AnyHashable` (a prefix query, tests).
  init(_ values: [AnyHashable]) {
    items = values.map(CacheKeyComponent.init(anyHashable:))
  }

  /// The components as `AnyHashable`, in order.
  var values: [AnyHashable] { items.map(\.anyHashable) }
}

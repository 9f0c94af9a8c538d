/// A map from cache keys of every `Value` type to elements that also finds every key whose components start with
/// given ones, in time proportional to the prefix's length plus the number of keys found.
///
/// A dictionary answers lookups; a trie over the components answers prefix queries. Each trie node is a key's
/// leading components: its children are keyed by the next component, and it records the `Value` types of the keys
/// that end at it. A node exists only while a key ends at it or below it, so a query visits only nodes on paths to
/// keys it returns, and memory returns when keys go.
///
/// The trie is built by the first prefix query, from the keys held then, and kept from there on: an index that is
/// never asked for a prefix (a cache whose `invalidate(prefix:)` is never called) pays one hash per insertion and
/// removal, not one per component and level, and holds no nodes.
///
/// ```swift
/// var index = CacheKeyIndex<Int>()
/// index[CacheKey<[Post]>("posts", 1).erased] = 10
/// index[CacheKey<User>("users", 1).erased] = 20
/// index.keys(withPrefix: ["posts"])  // [the posts key]
/// ```
struct CacheKeyIndex<Element> {
  /// Every key and its element.
  private var elements: [AnyCacheKey: Element] = [:]
  /// The same keys, by their components; `nil` until the first prefix query. Invariant: once built, it holds exactly
  /// the keys of `elements`.
  private var trie: CacheKeyTrie?

  init() {}

  /// The element of `key`; setting `nil` removes the key.
  subscript(key: AnyCacheKey) -> Element? {
    get { elements[key] }
    set {
      if let newValue {
        if elements.updateValue(newValue, forKey: key) == nil {
          trie?.insert(key)
        }
      } else {
        removeValue(forKey: key)
      }
    }
  }

  /// Removes `key` and returns its element, or `nil` when it had none.
  @discardableResult
  mutating func removeValue(forKey key: AnyCacheKey) -> Element? {
    guard let element = elements.removeValue(forKey: key) else { return nil }
    elements.shrinkIfSparse()
    trie?.remove(key)
    return element
  }

  /// Removes every key.
  mutating func removeAll() {
    elements = [:]
    trie = nil
  }

  /// The number of keys.
  var count: Int { elements.count }

  /// The elements, in no particular order.
  var values: Dictionary<AnyCacheKey, Element>.Values { elements.values }

  /// Calls `body` with each key and its element, in no particular order.
  func forEach(_ body: (AnyCacheKey, Element) throws -> Void) rethrows {
    for (key, element) in elements {
      try body(key, element)
    }
  }

  /// Every key, of any `Value` type, whose components start with `prefix`, in no particular order; an empty prefix
  /// matches every key, a prefix longer than a key never matches it. The first query builds the trie (in time
  /// proportional to the number of keys).
  mutating func keys(withPrefix prefix: [AnyHashable]) -> [AnyCacheKey] {
    if trie == nil {
      var built = CacheKeyTrie()
      for key in elements.keys { built.insert(key) }
      trie = built
    }
    return trie?.keys(withPrefix: CacheKeyComponents(prefix)) ?? []
  }

  /// Whether a prefix query has built the trie.
  var hasTrie: Bool { trie != nil }

  /// The number of trie nodes, the root included (1 when empty, or not built).
  var nodeCount: Int { trie?.root.nodeCount ?? 1 }

  /// How many keys the storage of the elements and of the trie's nodes has room for, in total.
  var storageCapacity: Int { elements.capacity + (trie?.root.childCapacity ?? 0) }
}

extension CacheKeyIndex: Sendable where Element: Sendable {}

/// The trie of a ``CacheKeyIndex``.
struct CacheKeyTrie: Sendable {
  /// The node of no components.
  private(set) var root = CacheKeyTrieNode()

  /// Adds `key`, which it does not hold.
  mutating func insert(_ key: AnyCacheKey) {
    root.insert(key, from: 0)
  }

  /// Removes `key`, which it holds, and every node left with no key at or below it.
  mutating func remove(_ key: AnyCacheKey) {
    root.remove(key, from: 0)
  }

  /// Every key whose components start with `prefix`.
  func keys(withPrefix prefix: CacheKeyComponents) -> [AnyCacheKey] {
    var node = root
    var edge: CacheKeyEdge?
    for depth in prefix.items.indices {
      guard let index = node.children.index(forKey: CacheKeyEdge(prefix, depth)) else { return [] }
      // The stored edge, so that the keys found carry their own components, not the prefix's.
      (edge, node) = (node.children[index].key, node.children[index].value)
    }
    var keys = [AnyCacheKey]()
    node.collect(reachedBy: edge, into: &keys)
    return keys
  }
}

/// A node of a ``CacheKeyTrie``: a sequence of leading components.
///
/// A value type, so that a leaf costs no allocation of its own: an empty `children` and a single `Value` type are
/// stored inline.
struct CacheKeyTrieNode: Sendable {
  /// The nodes one component longer, by that component.
  var children: [CacheKeyEdge: CacheKeyTrieNode] = [:]
  /// The `Value` type of one key ending here.
  private var firstEnd: ObjectIdentifier?
  /// The `Value` types of the other keys ending here. Invariant: empty when `firstEnd` is `nil`.
  private var otherEnds: [ObjectIdentifier] = []

  /// Whether no key ends at or below this node.
  var isEmpty: Bool { firstEnd == nil && children.isEmpty }

  /// The number of nodes in this subtree, this one included.
  var nodeCount: Int { children.values.reduce(1) { $0 + $1.nodeCount } }

  /// The total capacity of the children dictionaries in this subtree.
  var childCapacity: Int { children.values.reduce(children.capacity) { $0 + $1.childCapacity } }

  mutating func insert(_ key: AnyCacheKey, from depth: Int) {
    guard depth < key.storage.items.count else {
      if firstEnd == nil { firstEnd = key.valueType } else { otherEnds.append(key.valueType) }
      return
    }
    children[CacheKeyEdge(key.storage, depth), default: CacheKeyTrieNode()].insert(key, from: depth + 1)
  }

  /// Returns whether this node is left empty (its parent then drops it), so that no node is copied to ask.
  @discardableResult
  mutating func remove(_ key: AnyCacheKey, from depth: Int) -> Bool {
    guard depth < key.storage.items.count else {
      if firstEnd == key.valueType {
        firstEnd = otherEnds.popLast()
      } else if let index = otherEnds.firstIndex(of: key.valueType) {
        otherEnds.remove(at: index)
      }
      return isEmpty
    }
    guard let index = children.index(forKey: CacheKeyEdge(key.storage, depth)) else { return false }
    if children.values[index].remove(key, from: depth + 1) {
      children.remove(at: index)
      children.shrinkIfSparse()
    }
    return isEmpty
  }

  /// Appends the keys at or below this node, which `edge` leads to (`nil`: the root).
  func collect(reachedBy edge: CacheKeyEdge?, into keys: inout [AnyCacheKey]) {
    if let firstEnd {
      let components = edge?.path ?? CacheKeyComponents([])
      keys.append(AnyCacheKey(valueType: firstEnd, storage: components))
      for valueType in otherEnds {
        keys.append(AnyCacheKey(valueType: valueType, storage: components))
      }
    }
    for (childEdge, child) in children {
      child.collect(reachedBy: childEdge, into: &keys)
    }
  }
}

extension Dictionary {
  /// Moves the contents to smaller storage once at most an eighth of the capacity is used, since removals never
  /// shrink a dictionary. Amortized O(1) per removal: rebuilt with `n` keys, it has room for `2n` to `6n`, so the
  /// next rebuild comes after at least `n / 4` more removals.
  mutating func shrinkIfSparse() {
    guard capacity >= 64, count <= capacity / 8 else { return }
    var smaller = Self(minimumCapacity: count * 2)
    for (key, value) in self {
      smaller[key] = value
    }
    self = smaller
  }
}

/// The component at `depth` of some key's components, compared and hashed as that component alone.
///
/// It refers to the components of the key that created its node instead of holding a copy, so an edge costs two
/// words. Invariant: that key's first `depth` components are the components of the edge's parent node. It keeps
/// those components alive while the node exists, even after the key is removed.
struct CacheKeyEdge: Hashable, Sendable {
  let source: CacheKeyComponents
  let depth: Int

  init(_ source: CacheKeyComponents, _ depth: Int) {
    self.source = source
    self.depth = depth
  }

  var component: CacheKeyComponent { source.items[depth] }

  /// The components of the node the edge leads to: the source's first `depth + 1`.
  var path: CacheKeyComponents {
    source.items.count == depth + 1 ? source : CacheKeyComponents(items: Array(source.items[...depth]))
  }

  static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.component == rhs.component
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(component)
  }
}

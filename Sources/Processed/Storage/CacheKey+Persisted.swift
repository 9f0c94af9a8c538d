extension CacheKey where Value: Codable {
  /// The same key, whose value a ``LoadCache`` with a ``CacheStorage`` keeps between launches, under a name derived
  /// from `Value` and the components (``storageName``).
  ///
  /// ```swift
  /// extension CacheKey where Value == [Post] {
  ///   static func feed(_ user: Int) -> Self { CacheKey("feed", user).persisted() }
  /// }
  /// ```
  ///
  /// The components must be strings, integers (of any width: equal integers get equal names) or booleans; any other
  /// component stops the program with a message naming ``persisted(name:)``, which takes the name explicitly. Equal
  /// keys get equal names, unequal keys different ones. Equality, hashing and prefix matching ignore persistence.
  /// See <doc:PersistingTheCache>.
  public func persisted() -> CacheKey<Value> {
    persisted(name: defaultStorageName)
  }

  /// The same key, kept between launches under `name`.
  ///
  /// ```swift
  /// let key = CacheKey<Settings>("settings", UUID()).persisted(name: "settings")
  /// ```
  ///
  /// - Parameter name: The record's name in the storage: any string (the storage maps it to what it can hold).
  public func persisted(name: String) -> CacheKey<Value> {
    var key = self
    key.persistence = KeyPersistence(name: name)
    return key
  }

  /// `Value`'s full name and each component as a length-prefixed token (`s5:posts`, `i42`, `b1`): equal keys give equal
  /// names and unequal keys different ones.
  private var defaultStorageName: String {
    var name = Self.token(String(reflecting: Value.self))
    for component in storage.components.items {
      name += "|"
      switch component {
      case .int(let value): name += "i\(value)"
      case .string(let value): name += "s" + Self.token(value)
      case .other(let boxed):
        if let value = boxed.value.base as? any BinaryInteger {
          name += "i\(value)"
        } else if let value = boxed.value.base as? Bool {
          name += value ? "b1" : "b0"
        } else if let value = boxed.value.base as? String {
          name += "s" + Self.token(value)
        } else {
          preconditionFailure(
            "Processed: \(self).persisted() takes keys whose components are strings, integers or booleans; "
              + "\(type(of: boxed.value.base)) is none: name its record with persisted(name:)")
        }
      }
    }
    return name
  }

  private static func token(_ text: String) -> String { "\(text.utf8.count):\(text)" }
}

extension CacheKey {
  /// The name the key's value is stored under, when the key is persisted (``persisted()``); `nil` when it is not.
  ///
  /// ```swift
  /// CacheKey<Int>("count").storageName              // nil
  /// CacheKey<Int>("count").persisted().storageName  // "9:Swift.Int|s5:count"
  /// ```
  public var storageName: String? { persistence?.name }
}

/// One component of a cache key. `Int` and `String`, the common components, are stored as they are, so that a key
/// lookup compares and hashes them without `AnyHashable`'s dynamic casts; any other type is kept in an `AnyHashable`.
///
/// Equal exactly when the components' `AnyHashable`s are (an `Int64(1)` component, kept boxed, equals `1`), and
/// hashed as `AnyHashable` hashes them: an `Int` as its value (the standard library hashes every integer type inside
/// `AnyHashable` as its 64-bit pattern), a `String` as itself, so equal components hash alike across the cases.
@usableFromInline
enum CacheKeyComponent: Hashable, Sendable {
  case int(Int)
  case string(String)
  case other(Boxed)

  /// A component of any other type, boxed so that the enum stays three words (a key's array stays small).
  ///
  /// `@unchecked Sendable` because `AnyHashable` is not `Sendable`. Invariant: the value was `Sendable` when it was
  /// given (keys and prefix queries take only `Sendable` components) and is never mutated.
  @usableFromInline
  final class Boxed: @unchecked Sendable {
    @usableFromInline let value: AnyHashable

    @usableFromInline
    init(_ value: AnyHashable) {
      self.value = value
    }
  }

  @inlinable
  init(_ component: some Hashable & Sendable) {
    if let value = component as? Int {
      self = .int(value)
    } else if let value = component as? String {
      self = .string(value)
    } else {
      self = .other(Boxed(AnyHashable(component)))
    }
  }

  init(anyHashable value: AnyHashable) {
    if let int = value.base as? Int {
      self = .int(int)
    } else if let string = value.base as? String {
      self = .string(string)
    } else {
      self = .other(Boxed(value))
    }
  }

  /// The component as `AnyHashable`, as the key was given it.
  @usableFromInline
  var anyHashable: AnyHashable {
    switch self {
    case .int(let value): AnyHashable(value)
    case .string(let value): AnyHashable(value)
    case .other(let boxed): boxed.value
    }
  }

  @inlinable
  static func == (lhs: Self, rhs: Self) -> Bool {
    switch (lhs, rhs) {
    case (.int(let left), .int(let right)): left == right
    case (.string(let left), .string(let right)): left == right
    case (.int, .string), (.string, .int): false
    default: lhs.anyHashable == rhs.anyHashable
    }
  }

  @inlinable
  func hash(into hasher: inout Hasher) {
    switch self {
    case .int(let value): hasher.combine(value)
    case .string(let value): hasher.combine(value)
    case .other(let boxed): hasher.combine(boxed.value)
    }
  }
}

/// The state of a value that is loaded asynchronously: absent, loading, failed or loaded.
///
/// A `LoadableState` is a plain value. On its own it is a convenient way to model a load in a view model; held by
/// the ``Loadable`` property wrapper or a ``LoadableSupport`` class, the library drives it through its cases for you.
///
/// ```swift
/// var feed: LoadableState<[Post]> = .absent
///
/// feed.setLoading()
/// do {
///   feed.setValue(try await api.feed())
/// } catch {
///   feed.setError(error)
/// }
///
/// if let posts = feed.data { render(posts) }
/// ```
///
/// ## Equality of errors
///
/// When `Value` is `Equatable`, so is the state. Two `.error` states are equal when their errors have the same
/// dynamic type and, if that type is `Equatable`, compare equal with its `==`. Errors of the same type that is not
/// `Equatable` count as equal; errors of different types never do.
///
/// ```swift
/// LoadableState<Int>.error(TimeoutError()) == .error(TimeoutError())    // true
/// LoadableState<Int>.error(TimeoutError()) == .error(CancelLoadable())  // false
/// ```
public enum LoadableState<Value> {
  /// Nothing has been loaded, and no load is under way.
  case absent

  /// A load is under way.
  case loading

  /// The last load failed with the given error.
  case error(any Error)

  /// The last load produced the given value.
  case loaded(Value)
}

// MARK: - Mutators

extension LoadableState {
  /// Sets the state to ``absent``.
  ///
  /// ```swift
  /// feed.setAbsent()  // feed == .absent
  /// ```
  public mutating func setAbsent() {
    self = .absent
  }

  /// Sets the state to ``loading``.
  ///
  /// ```swift
  /// feed.setLoading()  // feed == .loading
  /// ```
  public mutating func setLoading() {
    self = .loading
  }

  /// Sets the state to ``error(_:)`` with the given error.
  ///
  /// ```swift
  /// feed.setError(TimeoutError())  // feed.error is TimeoutError
  /// ```
  ///
  /// - Parameter error: The error the load failed with.
  public mutating func setError(_ error: any Error) {
    self = .error(error)
  }

  /// Sets the state to ``loaded(_:)`` with the given value.
  ///
  /// ```swift
  /// numbers.setValue([1, 2, 3])  // numbers == .loaded([1, 2, 3])
  /// ```
  ///
  /// - Parameter value: The loaded value.
  public mutating func setValue(_ value: Value) {
    self = .loaded(value)
  }
}

// MARK: - Queries

extension LoadableState {
  /// Whether the state is ``absent``.
  public var isAbsent: Bool {
    if case .absent = self { true } else { false }
  }

  /// Whether the state is ``loading``.
  public var isLoading: Bool {
    if case .loading = self { true } else { false }
  }

  /// Whether the state is ``error(_:)``.
  public var isError: Bool {
    if case .error = self { true } else { false }
  }

  /// Whether the state is ``loaded(_:)``.
  public var isLoaded: Bool {
    if case .loaded = self { true } else { false }
  }

  /// The error of an ``error(_:)`` state, or `nil` in any other state.
  ///
  /// ```swift
  /// if let error = feed.error { showAlert(for: error) }
  /// ```
  public var error: (any Error)? {
    if case .error(let error) = self { error } else { nil }
  }

  /// The value of a ``loaded(_:)`` state, or `nil` in any other state.
  ///
  /// ```swift
  /// let count = numbers.data?.count ?? 0
  /// ```
  public var data: Value? {
    if case .loaded(let value) = self { value } else { nil }
  }
}

// MARK: - Transforming

extension LoadableState {
  /// Transforms the loaded value, carrying every other state over unchanged.
  ///
  /// `.absent`, `.loading` and `.error(e)` become the same case of the new state; `.loaded(value)` becomes
  /// `.loaded(transform(value))`. An error thrown by `transform` is rethrown.
  ///
  /// ```swift
  /// let numbers: LoadableState<[Int]> = .loaded([1, 2, 3])
  /// let count = numbers.map(\.count)  // .loaded(3)
  /// ```
  ///
  /// - Parameter transform: A closure that transforms the loaded value.
  /// - Returns: The state with its loaded value transformed.
  public func map<NewValue>(_ transform: (Value) throws -> NewValue) rethrows -> LoadableState<NewValue> {
    switch self {
    case .absent: .absent
    case .loading: .loading
    case .error(let error): .error(error)
    case .loaded(let value): .loaded(try transform(value))
    }
  }

  /// Transforms the loaded value, treating a `nil` result as ``absent``.
  ///
  /// `.absent`, `.loading` and `.error(e)` become the same case of the new state; `.loaded(value)` becomes
  /// `.loaded(newValue)` when `transform(value)` returns a value, and `.absent` when it returns `nil`. An error thrown
  /// by `transform` is rethrown.
  ///
  /// ```swift
  /// let posts: LoadableState<[Post]> = .loaded([])
  /// let newest = posts.compactMap(\.first)  // .absent
  /// ```
  ///
  /// - Parameter transform: A closure that transforms the loaded value, or returns `nil` for "no value".
  /// - Returns: The state with its loaded value transformed, or ``absent`` where the transform returned `nil`.
  public func compactMap<NewValue>(_ transform: (Value) throws -> NewValue?) rethrows -> LoadableState<NewValue> {
    switch self {
    case .absent: .absent
    case .loading: .loading
    case .error(let error): .error(error)
    case .loaded(let value): try transform(value).map { .loaded($0) } ?? .absent
    }
  }
}

// MARK: - Conformances

// `any Error` is `Sendable` (`Error` refines `Sendable`), so the only requirement is on `Value`.
extension LoadableState: Sendable where Value: Sendable {}

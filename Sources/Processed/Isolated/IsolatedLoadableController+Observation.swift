extension IsolatedLoadableController {
  // MARK: Observation

  /// Calls `onChange` synchronously on the owning actor after every change of the state, with the rules of
  /// ``LoadableController/observe(_:)``: in registration order, once per change, in the order of the changes.
  ///
  /// ```swift
  /// let token = $feed.observe { state in self.log.append("\(state)") }
  /// ```
  ///
  /// - Parameters:
  ///   - isolation: The owning actor; the default is the caller's.
  ///   - onChange: Called with each new state, on the owning actor.
  /// - Returns: The token that keeps the observer registered.
  public func observe(
    isolation: isolated (any Actor) = #isolation, _ onChange: @escaping (LoadableState<Value>) -> Void
  ) -> ObservationToken {
    storage.claim(isolation)
    return storage.observe(onChange)
  }

  /// The current state, then every later change, in order — never dropped or coalesced. Ends when the state goes
  /// away with its actor.
  ///
  /// ```swift
  /// for await state in $feed.states { if state.isLoaded { break } }
  /// ```
  public var states: AsyncStream<LoadableState<Value>> {
    storage.checkOwner()
    return storage.states()
  }
}

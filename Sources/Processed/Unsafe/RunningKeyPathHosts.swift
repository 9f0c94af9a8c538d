/// The hosts of running key-path loads, by instance and key path.
///
/// The last one started is `lastHost`, found by identity without hashing; the others are in `table`; a host is in one,
/// never both. Main-actor only, single accesses (see `Unsafe/README.md`).
@usableFromInline @MainActor
enum RunningKeyPathHosts {
  /// The running hosts other than `lastHost`.
  @usableFromInline @exclusivity(unchecked) static var table: [KeyPathHostKey: AnyObject] = [:]
  /// The host of the last load started on a state that had none running; not in `table`.
  @usableFromInline @exclusivity(unchecked) static var lastHost: AnyObject?
  /// The key of `lastHost`; it holds the key path object, so the identities below are not reused meanwhile.
  @exclusivity(unchecked) static var lastKey: KeyPathHostKey?
  /// The identities of `lastHost`'s instance and key path object, compared without reference counting. The host
  /// holds its instance, and `lastKey` the key path object.
  @usableFromInline @exclusivity(unchecked) static var lastInstance: ObjectIdentifier?
  @usableFromInline @exclusivity(unchecked) static var lastKeyPath: ObjectIdentifier?

  /// The running host for `key`, looked up by equality (another key path object may equal the host's).
  @usableFromInline
  static func runningHost(for key: KeyPathHostKey) -> AnyObject? {
    if let lastHost, lastKey == key { return lastHost }
    return table.isEmpty ? nil : table[key]
  }

  /// Hosts whose load ended during a write that reaches them unretained (see `KeyPathHost.storeUnretained`), kept
  /// until that write returns.
  @usableFromInline @exclusivity(unchecked) static var retired: [AnyObject] = []

  /// Releases a host kept in ``retired``, once the write that needed it returned.
  @usableFromInline
  static func release(retired host: AnyObject) {
    guard let index = retired.firstIndex(where: { $0 === host }) else { return }
    // Released after the array's mutation: the host's `deinit` may release its model, whose `deinit` is user code.
    let released = retired.remove(at: index)
    withExtendedLifetime(released) {}
  }

  /// Every running host's key (for tests and diagnostics).
  static var runningKeys: [KeyPathHostKey] {
    Array(table.keys) + (lastKey.map { [$0] } ?? [])
  }

  /// Records `host` as running for `key`; the previous `lastHost` moves to the table.
  @usableFromInline
  static func register(_ host: AnyObject, _ key: KeyPathHostKey) {
    if let previous = lastHost, let previousKey = lastKey { table[previousKey] = previous }
    lastHost = host
    lastKey = key
    lastInstance = key.instance
    lastKeyPath = ObjectIdentifier(key.keyPath)
  }

  /// Forgets `host` (its load ended), if it is still the running host for `key`.
  @usableFromInline
  static func forget(_ host: AnyObject, _ key: KeyPathHostKey) {
    if lastHost === host {
      lastHost = nil
      lastKey = nil
      lastInstance = nil
      lastKeyPath = nil
    } else if !table.isEmpty, table[key] === host {
      table[key] = nil
    }
  }
}

/// The reference to a host that its loads' tasks hold, shared by all its loads: it never keeps the host alive and reads
/// `nil` once it is gone.
///
/// Weak for a wrapper's storage; unretained for a key-path host, whose `deinit` clears it on the main actor; retained,
/// one per load, for a host whose loads may keep it alive (`StateHost.loadsRetainHost`: a cache entry). See
/// Unsafe/README.md and Documentation/LoadPhases.md.
@usableFromInline
final class HostReference<Host: AnyObject & Sendable>: @unchecked Sendable {
  // `@unchecked`: `weakObject` is only assigned in `init` (reading a weak reference is thread-safe);
  // `mainActorObject` is read and cleared on the main actor only. Each access is a single load or store that never
  // overlaps another, so their dynamic exclusivity checks (read on every `yield` and outcome) are skipped.
  @usableFromInline @exclusivity(unchecked) weak var weakObject: Host?
  @usableFromInline @exclusivity(unchecked) var mainActorObject: Unmanaged<Host>?
  @usableFromInline let isWeak: Bool
  /// Whether `mainActorObject` holds a +1 of its own, released with the reference.
  @usableFromInline let retainsObject: Bool

  @usableFromInline
  init(_ object: Host, releasedOnMainActorOnly: Bool) {
    isWeak = !releasedOnMainActorOnly
    retainsObject = false
    if isWeak { weakObject = object } else { mainActorObject = .passUnretained(object) }
  }

  /// A reference that keeps `object` alive until the reference goes (read like the unretained kind: the object lives
  /// at least as long as the reference).
  @usableFromInline
  init(retaining object: Host) {
    isWeak = false
    retainsObject = true
    mainActorObject = .passRetained(object)
  }

  deinit {
    if retainsObject { mainActorObject?.release() }
  }

  /// The host, while it exists.
  @inlinable @MainActor
  var object: Host? { isWeak ? weakObject : mainActorObject?.takeUnretainedValue() }

  /// Writes `state`, yielded by the load `id`, if that load is still the host's current one.
  ///
  /// A main-actor host is reached without a retain: it is called through ``StateHost/storeUnretained(_:)``, which
  /// keeps it alive until the write returns even when the write ends its load (an observer may cancel it).
  @inlinable @MainActor
  func storeIfCurrent(_ state: Host.State, id: UInt64) where Host: StateHost {
    if isWeak {
      guard let host = weakObject, host.tracker.isCurrent(id) else { return }
      if host.tracker.screen != nil { host.dropStartOnScreen() }
      host.store(state)
    } else {
      guard let host = mainActorObject else { return }
      host.withGuaranteedInstance { host in
        guard host.tracker.isCurrent(id) else { return }
        if host.tracker.screen != nil { host.dropStartOnScreen() }
        host.storeUnretained(state)
      }
    }
  }

  /// Called by the `deinit` of a host released on the main actor only.
  func hostDidEnd() {
    MainActor.preconditionIsolated("Processed: a key-path host was released off the main actor")
    mainActorObject = nil
  }
}

/// What a host keeps about its state's activity beyond its tracker, made the first time it is needed; until then the
/// activity is derived from the tracker, so plain loads pay one `nil` check per start and end.
///
/// An ``ObservableModel``, so that activity observers get the delivery rules of state observers. See
/// Documentation/LoadPhases.md.
@usableFromInline @MainActor
final class ActivityRecord: ObservableModel {
  @usableFromInline let observers = ObserverRegistry()
  /// The activity last delivered to observers.
  @Observed var published: LoadActivity
  /// The current load's phase, set by the phase driver; `nil`: derived from the tracker.
  @usableFromInline var phase: LoadActivity.Phase?
  /// The current load's last reported progress.
  @usableFromInline var progress: LoadProgress?
  /// The error kept beside the state (a retried attempt's, a failed refresh's).
  @usableFromInline var lastError: (any Error)?

  init(published: LoadActivity) {
    self.published = published
  }
}

extension StateHost {
  /// The activity of the state now.
  @usableFromInline
  var activity: LoadActivity {
    guard let record = activityRecord else {
      return LoadActivity(phase: tracker.isRunning ? .running(attempt: 1) : .idle)
    }
    return record.activity(isRunning: tracker.isRunning)
  }

  /// The record, made if there is none yet.
  @usableFromInline
  func makeActivityRecord() -> ActivityRecord {
    if let record = activityRecord { return record }
    let record = ActivityRecord(published: activity)
    activityRecord = record
    return record
  }

  /// Delivers the activity to its observers if it changed since the last delivery. Does nothing without a record.
  @inlinable @inline(__always)
  func publishActivity() {
    guard let record = activityRecord else { return }
    record.publish(isRunning: tracker.isRunning)
  }

  /// The current load entered `phase`.
  @usableFromInline
  func enter(_ phase: LoadActivity.Phase) {
    if activityRecord == nil, phase == .running(attempt: 1) { return }  // what a host without a record derives
    makeActivityRecord().phase = phase
    publishActivity()
  }

  /// The current load's activity is reset as a load starts or ends: no phase of its own, no progress.
  @inlinable @inline(__always)
  func clearLoadActivity() {
    guard let record = activityRecord else { return }
    record.phase = nil
    record.progress = nil
  }

  /// Keeps `error` beside the state (`nil` clears it).
  @inlinable
  func keepError(_ error: (any Error)?) {
    if error == nil, activityRecord?.lastError == nil { return }
    makeActivityRecord().lastError = error
  }

  /// A progress report of load `id`: kept when that load is current.
  func reportProgress(_ progress: LoadProgress, from id: UInt64) {
    guard tracker.isCurrent(id) else { return }
    makeActivityRecord().progress = progress
    publishActivity()
  }

  /// Registers an observer of the activity.
  @usableFromInline
  func observeActivity(_ onChange: @escaping @MainActor (LoadActivity) -> Void) -> ObservationToken {
    makeActivityRecord().observe(isRunning: tracker.isRunning, onChange)
  }
}

extension ActivityRecord {
  @usableFromInline
  func activity(isRunning: Bool) -> LoadActivity {
    LoadActivity(
      phase: isRunning ? (phase ?? .running(attempt: 1)) : .idle, progress: isRunning ? progress : nil,
      lastError: lastError)
  }

  @usableFromInline
  func publish(isRunning: Bool) {
    let now = activity(isRunning: isRunning)
    if now != published { published = now }
  }

  /// Registers an observer of the activity, after bringing what was last delivered up to date (so that its first
  /// call is a real change).
  func observe(isRunning: Bool, _ onChange: @escaping @MainActor (LoadActivity) -> Void) -> ObservationToken {
    publish(isRunning: isRunning)
    return observe(\.published, onChange)
  }
}

extension HostReference: ProgressSink where Host: StateHost {
  /// A main-actor load's reports are kept when they come from the main actor.
  @usableFromInline
  func reportProgress(_ progress: LoadProgress, from id: UInt64, isolation: isolated (any Actor)?) {
    guard isolation === MainActor.shared else { return }
    MainActor.assumeIsolated { object?.reportProgress(progress, from: id) }
  }
}

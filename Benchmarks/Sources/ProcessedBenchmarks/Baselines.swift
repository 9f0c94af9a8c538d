import HandWritten
// What a user would write by hand, or pick instead: the baselines every figure is compared with.
import Observation
import OpenCombine
import Processed

/// OpenCombine's `@Published` with `sink` subscribers.
final class CombineModel {
  @OpenCombine.Published var value = 0
}

/// The Observation framework: one `withObservationTracking` registration per observer and change.
@Observable
final class ObservationModel {
  var value = 0
}

/// A counter the Observation baseline's `@Sendable` `onChange` closures can bump.
final class Counter: @unchecked Sendable {
  var count = 0
}

/// A model for Processed's `@Observed`, `@Loadable` and key-path forms.
@MainActor
final class ProcessedModel: ObservableModel, LoadableSupport {
  let observers = ObserverRegistry()
  @Observed var value = 0
  /// The payload of the write + notify floor, for `@Observed`.
  @Observed var state: LoadableState<Int> = .absent
  var numbers: LoadableState<Int> = .absent
}

/// A screen's model with one `@Loadable` state, for a state's whole life (made, observed, released).
@MainActor
final class ScreenModel {
  @Loadable var feed: LoadableState<Int> = .absent
}

/// `ScreenModel` written by hand: the write + notify floor's registry in its place.
final class HandScreenModel {
  let feed = HandStateRegistry()
}

/// `ProcessedModel`'s `@Observed` property in a model that opts in to the Observation bridge.
@MainActor
final class BridgedModel: ObservableModel, Observable {
  let observers = ObserverRegistry()
  @Observed var value = 0
}

/// Whether a cache's fetch waits for the network (``LoadOptions/networkMode``).
///
/// ```swift
/// // A fetch that reads a local database runs whatever the network does:
/// $notes.load(.notes, in: cache, options: LoadOptions(networkMode: .always)) { try await database.notes() }
/// ```
///
/// Only a ``LoadCache`` knows whether the network is up (``LoadCache/setOnline(_:)``): the mode applies to the fetches
/// of its entries and to its mutations; a load without a cache ignores it. See <doc:Revalidating>.
public enum NetworkMode: Sendable, Hashable {
  /// While the cache is offline, a fetch does not start and a retry does not continue: their states keep what they
  /// show, with activity ``LoadActivity/Phase/paused``, until the network comes back. An attempt already running goes
  /// on. The default.
  case online
  /// The network is ignored: fetches start and retry as if the cache were always online.
  case always
}

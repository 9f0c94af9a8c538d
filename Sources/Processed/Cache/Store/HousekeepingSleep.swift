/// Marks the sleeps of a cache's own timers (its garbage collector): work of the library's that no test waits for.
///
/// `ProcessedTesting`'s `TestClock` reads it when a sleep starts: such a sleep is woken by `advance` like any other,
/// but never counts in `sleeperCount` or `waitForSleepers`, so that one clock may drive a cache and its loads and a
/// test's `waitForSleepers(1)` waits for the request, not for the collector. Other clocks ignore it.
package enum HousekeepingSleep {
  /// Whether the sleep starting now is a cache's own timer.
  @TaskLocal package static var isActive = false
}

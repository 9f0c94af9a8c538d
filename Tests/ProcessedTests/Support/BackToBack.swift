/// Runs `write` back to back on the main actor while `keepGoing()` holds, at most `limit` times in all, and returns how
/// many times it ran.
///
/// A stress test races these writes against work on other threads. Between bursts of `burst` writes it yields the main
/// actor, so that the rest of the suite's main-actor work goes on: when the other threads wait for a free thread (a
/// busy machine, a sanitizer build), an unbroken loop would hold the main actor for the whole `limit` and starve every
/// test that runs beside it.
@MainActor
@discardableResult
func backToBack(
  while keepGoing: () -> Bool, limit: Int, burst: Int = 1_000, _ write: (_ index: Int) -> Void
) async -> Int {
  var writes = 0
  while writes < limit, keepGoing() {
    let end = min(writes + burst, limit)
    while writes < end, keepGoing() {
      write(writes)
      writes += 1
    }
    if writes < limit { await Task.yield() }
  }
  return writes
}

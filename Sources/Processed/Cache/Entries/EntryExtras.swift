/// The fields of a ``CacheEntry`` that most entries never use — pages, waiting `value(for:)` callers, persistence,
/// revalidation — kept out of line, so that an entry that uses none carries one `nil` word for them (measured: the
/// heap bytes per entry of a cache of plain values). Made on first need; the entry reads them through properties of
/// the same names.
@usableFromInline @MainActor
final class EntryExtras<Value: Sendable> {
  @usableFromInline var pagesAfterFirst = 0
  @usableFromInline var pendingPagesAfterFirst = 0
  var pageRefill: PageRefill<Value>?
  @usableFromInline var callers: CallerFetch<Value>?
  @usableFromInline var persisted: EntryPersistence<Value>?
  @usableFromInline var revalidation: EntryRevalidation?

  @usableFromInline
  init() {}
}

extension CacheEntry {
  /// The extras, made on first need.
  @inlinable
  var madeExtras: EntryExtras<Value> {
    if let extras { return extras }
    let made = EntryExtras<Value>()
    extras = made
    return made
  }

  /// For a paged list (``Pages``): how many pages the value has after the first (its `loadMore`s), what the fetch in
  /// flight will make it, and how to fetch them again (the last `loadMore`'s ``PageRefill``).
  @inlinable
  var pagesAfterFirst: Int {
    get { extras?.pagesAfterFirst ?? 0 }
    set { if newValue != 0 || extras != nil { madeExtras.pagesAfterFirst = newValue } }
  }

  @inlinable
  var pendingPagesAfterFirst: Int {
    get { extras?.pendingPagesAfterFirst ?? 0 }
    set { if newValue != 0 || extras != nil { madeExtras.pendingPagesAfterFirst = newValue } }
  }

  var pageRefill: PageRefill<Value>? {
    get { extras?.pageRefill }
    set { if newValue != nil || extras != nil { madeExtras.pageRefill = newValue } }
  }

  /// The callers of `value(for:options:fetch:)` waiting for the fetch in flight; `nil` when none waits.
  @usableFromInline
  var callers: CallerFetch<Value>? {
    get { extras?.callers }
    set { if newValue != nil || extras != nil { madeExtras.callers = newValue } }
  }

  /// For a persisted key's entry: its record's name and codec, and its restore (see `CacheStore+Restore.swift`).
  @usableFromInline
  var persisted: EntryPersistence<Value>? {
    get { extras?.persisted }
    set { if newValue != nil || extras != nil { madeExtras.persisted = newValue } }
  }

  /// Revalidation and polling (see `CacheEntry+Revalidation.swift`); `nil` until needed.
  @usableFromInline
  var revalidation: EntryRevalidation? {
    get { extras?.revalidation }
    set { if newValue != nil || extras != nil { madeExtras.revalidation = newValue } }
  }
}

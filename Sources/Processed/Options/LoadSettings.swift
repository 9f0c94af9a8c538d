/// The options a load runs with, boxed: a ``LoadOptions`` value is large (its clock is an existential), and a load
/// without options — the common case — should carry one word for them, not the whole value.
@usableFromInline
final class LoadSettings: Sendable {
  @usableFromInline let options: LoadOptions

  @usableFromInline
  init(_ options: LoadOptions) {
    options.checkSupported()
    self.options = options
  }
}

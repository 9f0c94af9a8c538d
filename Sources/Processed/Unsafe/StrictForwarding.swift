// Standard-library functions that take a closure, forwarded through this strictly checked module: passed straight, a
// main-actor closure gets an executor check on every call, which cost more than the work it wrapped. See
// Documentation/ObserverDelivery.md.

extension Unmanaged {
  /// Calls `body` with the instance, without retaining or releasing it. The caller guarantees that the instance
  /// outlives the call.
  ///
  /// `_withUnsafeGuaranteedRef(_:)`, forwarded (see the top of this file).
  @inlinable @inline(__always)
  func withGuaranteedInstance<Result>(_ body: (Instance) -> Result) -> Result {
    _withUnsafeGuaranteedRef(body)
  }
}

/// `withUnsafePointer(to:_:)`, forwarded (see the top of this file).
@inlinable @inline(__always)
func withPointer<Value, Result>(to value: Value, _ body: (UnsafePointer<Value>) -> Result) -> Result {
  withUnsafePointer(to: value, body)
}

/// `withUnsafeMutablePointer(to:_:)`, forwarded (see the top of this file).
@inlinable @inline(__always)
func withMutablePointer<Value, Result>(to value: inout Value, _ body: (UnsafeMutablePointer<Value>) -> Result)
  -> Result
{
  withUnsafeMutablePointer(to: &value, body)
}

extension ContiguousArray {
  /// `withUnsafeBufferPointer(_:)`, forwarded (see the top of this file).
  @inlinable @inline(__always)
  func withElements<Result>(_ body: (UnsafeBufferPointer<Element>) -> Result) -> Result {
    withUnsafeBufferPointer(body)
  }
}

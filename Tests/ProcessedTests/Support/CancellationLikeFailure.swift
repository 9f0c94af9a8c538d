/// An ordinary failure, for retry tests.
struct CancellationLikeFailure: Error, Equatable {}

import Foundation

/// Where an ``AuthClient`` reads the time: when an access token expires and whether it is due for
/// refresh. Inject one in tests to move past expiry without waiting.
public protocol AuthClock: Sendable {
    /// The current time.
    var now: Date { get }
}

/// The system's wall clock, the default.
public struct SystemClock: AuthClock {
    public init() {}
    public var now: Date { Date() }
}

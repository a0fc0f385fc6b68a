import Foundation

/// Wall-clock time, injectable so tests can move time (grace intervals, expiry).
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The real clock.
public struct SystemWallClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

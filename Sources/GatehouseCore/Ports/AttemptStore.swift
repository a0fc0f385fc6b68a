import Foundation

/// Attempt counters shared by every node, for login throttling and code guessing.
public protocol AttemptStore: Sendable {
    /// Adds one failure in a fixed window starting at the first failure; returns the count in the window.
    func recordFailure(key: String, now: Date, window: TimeInterval) async throws -> AttemptCount
    func current(key: String, now: Date, window: TimeInterval) async throws -> AttemptCount
    func reset(key: String) async throws
    /// Adds one to each counter in one statement; returns every counter's count in its window.
    func recordFailures(keys: [String], now: Date, window: TimeInterval) async throws -> [String: AttemptCount]
    /// Takes one counted attempt back from each counter (never below zero): a counted attempt that
    /// succeeded, or was never checked.
    func release(keys: [String]) async throws
}

/// What an attempt counter holds.
public struct AttemptCount: Sendable, Hashable {
    public var count: Int
    public var windowStart: Date
    public init(count: Int, windowStart: Date) {
        self.count = count
        self.windowStart = windowStart
    }
}

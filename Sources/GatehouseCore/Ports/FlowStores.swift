import Foundation

/// Persisted flows. Finishing one is atomic: exactly one caller gets the record.
public protocol FlowStore: Sendable {
    func insert(_ flow: FlowRecord) async throws
    func find(id: UUID) async throws -> FlowRecord?
    /// Moves an open flow from `step` to `next` (with the user and data known by then); returns false
    /// when the flow is not open or no longer at `step` (someone else moved it).
    func advance(id: UUID, from step: FlowStep, to next: FlowStep, userID: UUID?, data: String?, at: Date) async throws -> Bool
    /// Marks the flow finished if it is still open at `at`; returns the record only to the caller that did.
    func consume(id: UUID, at: Date) async throws -> FlowRecord?
}

/// One-time codes and link tokens.
public protocol OneTimeCodeStore: Sendable {
    func insert(_ code: OneTimeCodeRecord) async throws
    /// Consumes every open code of this purpose for this identifier and client (a new send kills the old one).
    func invalidate(purpose: OneTimeCodeRecord.Purpose, identifier: String, clientID: String, at: Date) async throws
    /// The newest unconsumed numeric code (not link token) of this purpose for this identifier and client.
    func findOpen(purpose: OneTimeCodeRecord.Purpose, identifier: String, clientID: String) async throws
        -> OneTimeCodeRecord?
    func find(tokenHash: String) async throws -> OneTimeCodeRecord?
    /// Counts one attempt, only while the code is open and has attempts left; returns the new count or nil.
    func recordAttempt(id: UUID) async throws -> Int?
    /// Consumes the code if still open; returns whether this call did it.
    func consume(id: UUID, at: Date) async throws -> Bool
}

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

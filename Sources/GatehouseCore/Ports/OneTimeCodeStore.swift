import Foundation

/// One-time codes and link tokens.
public protocol OneTimeCodeStore: Sendable {
    func insert(_ code: OneTimeCodeRecord) async throws
    /// Consumes every open code of this purpose for this identifier and client (a new send kills the old one).
    func invalidate(purpose: OneTimeCodeRecord.Purpose, identifier: String, clientID: String, at: Date) async throws
    /// The newest unconsumed numeric code (not link token) of this purpose for this identifier and client.
    func findOpen(
        purpose: OneTimeCodeRecord.Purpose, identifier: String, clientID: String
    ) async throws
        -> OneTimeCodeRecord?
    func find(tokenHash: String) async throws -> OneTimeCodeRecord?
    /// Counts one attempt, only while the code is open and has attempts left; returns the new count or nil.
    func recordAttempt(id: UUID) async throws -> Int?
    /// Consumes the code if still open; returns whether this call did it.
    func consume(id: UUID, at: Date) async throws -> Bool
}

import Foundation

/// Refresh-token chains, by token hash.
public protocol RefreshTokenStore: Sendable {
    func insert(_ token: RefreshTokenRecord) async throws
    func find(hash: String) async throws -> RefreshTokenRecord?
    /// The token, its session and whether the session's user is active, in one read: the refresh grant's
    /// hot path.
    func findWithSession(hash: String) async throws -> (token: RefreshTokenRecord, session: SessionRecord, userActive: Bool)?
    /// Inserts `successor` unless its parent (`successor.parentHash`) already has one; returns whether
    /// this call did. This is the atomic claim of a rotation: the parent's `rotatedAt` is its
    /// successor's `createdAt`.
    func insertSuccessor(_ successor: RefreshTokenRecord) async throws -> Bool
}

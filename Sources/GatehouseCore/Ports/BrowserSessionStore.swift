import Foundation

/// Signed-in browsers, by the hash of their cookie token.
public protocol BrowserSessionStore: Sendable {
    func insert(_ session: BrowserSessionRecord) async throws
    func find(tokenHash: String) async throws -> BrowserSessionRecord?
    func touch(id: UUID, at: Date) async throws
    /// The user proved who they are again in this browser (`max_age`, `prompt=login`); false when it ended.
    func reauthenticated(id: UUID, amr: [String], at: Date) async throws -> Bool
    /// Ends one live browser session; returns whether it was live.
    func revoke(id: UUID, at: Date) async throws -> Bool
    /// Ends every live browser session of a user; returns how many.
    func revokeAll(userID: UUID, at: Date) async throws -> Int
}

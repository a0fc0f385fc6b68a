import Foundation

extension Stores {
    /// Ends a user's app sessions (all, or all but `except`) and every browser session: single sign-on
    /// must not outlive a change of who may sign in (a new password, a first proof of the address, a
    /// sign-out everywhere, an operator's action). Returns how many app sessions ended.
    @discardableResult
    public func endAllSessions(of userID: UUID, except: UUID? = nil, at now: Date, reason: RevokeReason) async throws -> Int {
        let ended = try await sessions.revokeAll(userID: userID, except: except, at: now, reason: reason)
        _ = try await browserSessions.revokeAll(userID: userID, at: now)
        return ended
    }
}

import Foundation

extension Stores {
    /// Ends a user's app sessions (all, or all but `except`) and every browser session: single sign-on
    /// must not outlive a change of who may sign in (a new password, a first proof of the address, a
    /// sign-out everywhere, an operator's action). Returns how many app sessions ended. The clients
    /// of the ending sessions that listen are told (`notices`: required, so no caller forgets them).
    @discardableResult
    public func endAllSessions(
        of userID: UUID, except: UUID? = nil, at now: Date, reason: RevokeReason, notices: LogoutNotices
    ) async throws -> Int {
        let ending = try await sessions.listLive(userID: userID, now: now).filter { $0.id != except }
        try await notices.enqueue(for: ending, stores: self, now: now)
        let ended = try await sessions.revokeAll(userID: userID, except: except, at: now, reason: reason)
        _ = try await browserSessions.revokeAll(userID: userID, at: now)
        return ended
    }

    /// Ends one app session and tells its client when it listens; false when it was not live.
    public func endSession(_ id: UUID, at now: Date, reason: RevokeReason, notices: LogoutNotices) async throws -> Bool {
        guard try await sessions.revoke(id: id, at: now, reason: reason) else { return false }
        if let session = try await sessions.find(id: id) { try await notices.enqueue(for: [session], stores: self, now: now) }
        return true
    }

    /// Tells the clients of the user's live sessions that `ending` picks, before the caller ends them
    /// with the store's own statement (by credential, by client).
    public func announceEnd(of userID: UUID, at now: Date, notices: LogoutNotices, where ending: (SessionRecord) -> Bool) async throws {
        try await notices.enqueue(for: try await sessions.listLive(userID: userID, now: now).filter(ending), stores: self, now: now)
    }
}

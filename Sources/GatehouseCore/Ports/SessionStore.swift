import Foundation

/// Sessions.
public protocol SessionStore: Sendable {
    func insert(_ session: SessionRecord) async throws
    func find(id: UUID) async throws -> SessionRecord?
    /// A session and its user in one read: what every bearer-authenticated request reads.
    func findWithUser(id: UUID) async throws -> (session: SessionRecord, user: UserRecord)?
    /// A session and whether its user is active, in one read: what a refused chain refresh reads to say why.
    func findForRefresh(id: UUID) async throws -> (session: SessionRecord, userActive: Bool)?
    /// The atomic claim of a chain refresh, in one statement: moves the chain from `claim.from` to the
    /// next generation if the session is live, the client's, its user active, the token current and
    /// the DPoP key fits; returns the session as it is now, or nil when any of that failed.
    func advanceRefreshChain(_ claim: RefreshChainClaim) async throws -> SessionRecord?
    /// Binds a session's refresh tokens to a DPoP key, once: false when it is bound to another key.
    func bindDPoP(id: UUID, jkt: String) async throws -> Bool
    /// Live sessions of a user, newest first.
    func listLive(userID: UUID, now: Date) async throws -> [SessionRecord]
    /// Revokes one live session; returns whether it was live.
    func revoke(id: UUID, at: Date, reason: RevokeReason) async throws -> Bool
    /// Revokes every live session of a client (the client is being deleted); returns how many.
    func revokeAll(clientID: String, at: Date, reason: RevokeReason) async throws -> Int
    /// Revokes every live session started with one credential; returns how many.
    func revokeAll(credentialID: String, at: Date, reason: RevokeReason) async throws -> Int
    /// Revokes every live session a browser session signed in; returns how many.
    func revokeAll(browserSessionID: UUID, at: Date, reason: RevokeReason) async throws -> Int
    /// Revokes every live session of one user with one client; returns how many.
    func revokeAll(userID: UUID, clientID: String, at: Date, reason: RevokeReason) async throws -> Int
    /// Revokes every live session of a user except `except`; returns how many.
    func revokeAll(userID: UUID, except: UUID?, at: Date, reason: RevokeReason) async throws -> Int
    /// Gives the user's live anonymous sessions (`amr` exactly `["anon"]`) the `amr` of the upgrade
    /// that made the account permanent, so their next tokens no longer say `is_anonymous`.
    func replaceAnonymousAMR(userID: UUID, with amr: [String]) async throws
}

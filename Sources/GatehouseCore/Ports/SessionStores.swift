import Foundation

/// Sessions.
public protocol SessionStore: Sendable {
    func insert(_ session: SessionRecord) async throws
    func find(id: UUID) async throws -> SessionRecord?
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
}

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

/// What a user let a third-party client see (hosted sign-in's consent page), until they take it back.
public protocol ConsentStore: Sendable {
    func find(userID: UUID, clientID: String) async throws -> ConsentRecord?
    func upsert(_ consent: ConsentRecord) async throws
    /// Newest first.
    func list(userID: UUID) async throws -> [ConsentRecord]
    /// Returns whether there was one.
    func delete(userID: UUID, clientID: String) async throws -> Bool
}

import Foundation

/// Users, one row each. Uniqueness of email and phone is the store's to enforce.
public protocol UserStore: Sendable {
    /// Throws ``StoreError/conflict`` when the email or phone is taken.
    func insert(_ user: UserRecord) async throws
    func find(id: UUID) async throws -> UserRecord?
    func find(email: String) async throws -> UserRecord?
    func find(phone: String) async throws -> UserRecord?
    func update(_ user: UserRecord) async throws
    func recordLogin(id: UUID, at: Date) async throws
    func count() async throws -> Int
}

/// Typed credentials per user.
public protocol CredentialStore: Sendable {
    func upsert(_ credential: CredentialRecord) async throws
    func find(userID: UUID, kind: CredentialRecord.Kind) async throws -> CredentialRecord?
    func delete(userID: UUID, kind: CredentialRecord.Kind) async throws
}

/// Applications.
public protocol ClientStore: Sendable {
    /// Throws ``StoreError/conflict`` when the id is taken.
    func insert(_ client: ClientRecord) async throws
    func find(id: String) async throws -> ClientRecord?
    func findDefault() async throws -> ClientRecord?
    func list() async throws -> [ClientRecord]
    func update(_ client: ClientRecord) async throws
    /// Returns whether a row was deleted.
    func delete(id: String) async throws -> Bool
}

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

/// Signing keys.
public protocol SigningKeyStore: Sendable {
    func insert(_ key: SigningKeyRecord) async throws
    /// Every key that may still verify a token at `now` (the current one first).
    func listPublished(now: Date) async throws -> [SigningKeyRecord]
    /// Retires every key but `kid`, publishing each until `publishUntil`.
    func retireAll(except kid: String, at: Date, publishUntil: Date) async throws
}

/// Attempt counters shared by every node, for login throttling and code guessing.
public protocol AttemptStore: Sendable {
    /// Adds one failure in a fixed window starting at the first failure; returns the count in the window.
    func recordFailure(key: String, now: Date, window: TimeInterval) async throws -> AttemptCount
    func current(key: String, now: Date, window: TimeInterval) async throws -> AttemptCount
    func reset(key: String) async throws
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

/// The terms versions each user accepted, per client.
public protocol AgreementStore: Sendable {
    func find(userID: UUID, clientID: String) async throws -> AgreementRecord?
    func upsert(_ agreement: AgreementRecord) async throws
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

/// The durable outbox.
public protocol OutboxStore: Sendable {
    func enqueue(_ message: OutboxMessage) async throws
    /// Leases up to `limit` due messages to this caller until `leaseUntil`.
    func claimDue(now: Date, leaseUntil: Date, limit: Int) async throws -> [OutboxMessage]
    func markSent(id: UUID, at: Date) async throws
    func markFailed(id: UUID, error: String, retryAt: Date?, at: Date) async throws
    func list(status: OutboxMessage.Status?, limit: Int) async throws -> [OutboxMessage]
    func find(id: UUID) async throws -> OutboxMessage?
    func retry(id: UUID, at: Date) async throws -> Bool
}

/// All stores, bound to one database session (and transaction, when inside one).
public protocol Stores: Sendable {
    var users: any UserStore { get }
    var credentials: any CredentialStore { get }
    var clients: any ClientStore { get }
    var sessions: any SessionStore { get }
    var refreshTokens: any RefreshTokenStore { get }
    var signingKeys: any SigningKeyStore { get }
    var attempts: any AttemptStore { get }
    var codes: any OneTimeCodeStore { get }
    var outbox: any OutboxStore { get }
    var agreements: any AgreementStore { get }
}

/// The database: reads, and all-or-nothing transactions.
public protocol Persistence: Sendable {
    /// Runs `body` against the stores outside a transaction (each statement on its own).
    func read<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R
    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    func transaction<R: Sendable>(_ body: @escaping @Sendable (any Stores) async throws -> R) async throws -> R
    /// Reachability and schema check for readiness probes.
    func ping() async throws
    func shutdown() async
}

/// Store-level failures the flows must tell apart.
public enum StoreError: Error, Equatable, Sendable {
    /// A unique constraint rejected the write.
    case conflict(String)
}

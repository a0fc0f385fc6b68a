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

/// What operators read and erase about users (the admin API); no sign-in flow uses it.
public protocol UserDirectoryStore: Sendable {
    /// Users matching `search`, ordered by creation then id, after its cursor, at most its limit.
    func search(_ search: UserSearch) async throws -> [UserRecord]
    /// A user's sessions, live and ended, newest first.
    func sessions(userID: UUID, limit: Int) async throws -> [SessionRecord]
    /// The terms a user accepted, one row per client.
    func agreements(userID: UUID) async throws -> [AgreementRecord]
    /// Deletes the user and everything kept for them: credentials and their identifiers, sessions and
    /// their refresh tokens, browser sessions, flows, agreements, one-time codes (also those sent to
    /// `addresses` before the account existed) and mail or texts to `addresses`. Audit events stay
    /// (they name the user by id only and age out with the log). Returns whether the user existed.
    func erase(userID: UUID, addresses: [String]) async throws -> Bool
}

/// Credentials of every type, with their identifiers (unique per type across all users).
public protocol CredentialStore: Sendable {
    /// Throws ``StoreError/conflict`` when one of its identifiers is taken for its type.
    func insert(_ credential: CredentialRecord) async throws
    /// Writes config, version, identifiers and `updatedAt`; throws ``StoreError/conflict`` like `insert`.
    func update(_ credential: CredentialRecord) async throws
    func find(id: String) async throws -> CredentialRecord?
    /// The credential of `type` that answers to `identifier`.
    func find(type: CredentialType, identifier: String) async throws -> CredentialRecord?
    /// A user's credentials, of one type or all, oldest first.
    func list(userID: UUID, type: CredentialType?) async throws -> [CredentialRecord]
    /// Returns whether a row was deleted.
    func delete(id: String) async throws -> Bool
    /// Deletes every credential of `type` the user has; returns how many.
    func deleteAll(userID: UUID, type: CredentialType) async throws -> Int
    /// Adds one failure in one statement (exact under concurrency, across nodes); returns the new
    /// count, or nil when the credential is gone.
    func recordFailure(id: String, at: Date) async throws -> Int?
    /// Sets the count back to zero; returns whether the credential still exists (under PostgreSQL the
    /// row lock orders this against a concurrent delete).
    @discardableResult
    func resetFailures(id: String) async throws -> Bool
}

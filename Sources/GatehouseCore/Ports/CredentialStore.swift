import Foundation

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
    /// A user's credentials of any of `types`, oldest first, in one indexed read.
    func list(userID: UUID, types: [CredentialType]) async throws -> [CredentialRecord]
    /// How many credentials of `type` the user has, in one indexed count (no identifiers read).
    func count(userID: UUID, type: CredentialType) async throws -> Int
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

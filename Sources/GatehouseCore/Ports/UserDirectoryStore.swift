import Foundation

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

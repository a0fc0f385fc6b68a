import Foundation

extension PasswordStrategy {
    /// An address proved for the first time by a code sent to it (a one-time code, a recovery code)
    /// on an account that existed before: whoever created the account may not own the address, so
    /// the password they set goes, and every session they started ends (single sign-on included).
    /// The caller marks the address verified and `hasPassword` false on the record it writes.
    func firstProof(of userID: UUID, at now: Date, stores: any Stores, notices: LogoutNotices) async throws {
        try await removePassword(of: userID, stores: stores)
        _ = try await stores.endAllSessions(of: userID, at: now, reason: .passwordChanged, notices: notices)
    }
}

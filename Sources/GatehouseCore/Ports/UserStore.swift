import Foundation

/// Users, one row each. Uniqueness of email and phone is the store's to enforce.
public protocol UserStore: Sendable {
    /// Throws ``StoreError/conflict`` when the email or phone is taken.
    func insert(_ user: UserRecord) async throws
    func find(id: UUID) async throws -> UserRecord?
    func find(email: String) async throws -> UserRecord?
    func find(phone: String) async throws -> UserRecord?
    /// By the normalized username (``Username/normalize(_:)``).
    func find(username: String) async throws -> UserRecord?
    func update(_ user: UserRecord) async throws
    func recordLogin(id: UUID, at: Date) async throws
    func count() async throws -> Int
}

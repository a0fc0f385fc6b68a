import Foundation

/// What a user let a third-party client see (hosted sign-in's consent page), until they take it back.
public protocol ConsentStore: Sendable {
    func find(userID: UUID, clientID: String) async throws -> ConsentRecord?
    func upsert(_ consent: ConsentRecord) async throws
    /// Newest first.
    func list(userID: UUID) async throws -> [ConsentRecord]
    /// Returns whether there was one.
    func delete(userID: UUID, clientID: String) async throws -> Bool
}

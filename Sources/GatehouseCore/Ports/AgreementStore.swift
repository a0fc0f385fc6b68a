import Foundation

/// The terms versions each user accepted, per client.
public protocol AgreementStore: Sendable {
    func find(userID: UUID, clientID: String) async throws -> AgreementRecord?
    func upsert(_ agreement: AgreementRecord) async throws
}

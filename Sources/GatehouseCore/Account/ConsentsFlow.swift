import Foundation
import GatehouseAPI

/// The user's consents to third-party clients, from `/v1/me/consents`.
public struct ConsentsFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    public func list(_ principal: Principal) async throws -> ConsentList {
        let userID = principal.user.id
        let consents = try await services.persistence.read { try await $0.consents.list(userID: userID) }
        var shown: [Consent] = []
        for consent in consents {
            let name = try? await services.clients.resolve(consent.clientID).name
            shown.append(Consent(clientId: consent.clientID, clientName: name, scopes: consent.scopes, grantedAt: consent.grantedAt))
        }
        return ConsentList(consents: shown)
    }

    /// Withdraws the consent and ends the client's sessions of this user: what it was allowed to see,
    /// it may no longer fetch with tokens it already holds.
    public func revoke(_ principal: Principal, clientID: String) async throws {
        let userID = principal.user.id
        let now = services.clock.now()
        let found = try await services.persistence.transaction { stores -> Bool in
            guard try await stores.consents.delete(userID: userID, clientID: clientID) else { return false }
            try await stores.announceEnd(of: userID, at: now, notices: services.notices) { $0.clientID == clientID }
            _ = try await stores.sessions.revokeAll(userID: userID, clientID: clientID, at: now, reason: .consentRevoked)
            return true
        }
        guard found else { throw GatehouseError.notFound("No consent for this client.") }
    }
}

import Foundation
import GatehouseAPI

/// Whether an email or phone has an account: off by default per client (it tells who has one).
public struct IdentifierStatusFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// Off by default per client (it tells who has an account); rate limited per IP when on.
    public func identifierStatus(
        email: String?, phone: String?, clientID: String?, meta: RequestMeta
    ) async throws
        -> IdentifierStatus
    {
        let client = try await services.clients.resolve(clientID)
        guard client.settings.identifierStatus.isOn else {
            throw GatehouseError.featureNotEnabled("This client does not offer identifier status.")
        }
        let identifier = try Identifier.parse(email: email, phone: phone)
        let now = services.clock.now()
        try await services.rateLimits.consume(.identifierStatus, ip: meta.ipAddress, persistence: services.persistence, now: now)
        let user = try await services.persistence.read { try await identifier.findUser(in: $0) }
        guard let user else { return IdentifierStatus(exists: false, verified: false, hasPassword: false) }
        return IdentifierStatus(exists: true, verified: identifier.isVerified(for: user), hasPassword: user.hasPassword)
    }
}

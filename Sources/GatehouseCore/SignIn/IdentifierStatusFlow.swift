import Foundation
import GatehouseAPI

/// Whether an email or phone has an account: off by default per client (it tells who has one).
public struct IdentifierStatusFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// Off by default per client (it tells who has an account); rate limited per IP when on.
    /// `username` instead of `email` or `phone` asks about a username; `verified` then says whether
    /// the account's email address is.
    public func identifierStatus(
        email: String?, phone: String?, username: String? = nil, clientID: String?, meta: RequestMeta
    ) async throws
        -> IdentifierStatus
    {
        let client = try await services.clients.resolve(clientID)
        guard client.settings.identifierStatus.isOn else {
            throw GatehouseError.featureNotEnabled("This client does not offer identifier status.")
        }
        let now = services.clock.now()
        if let username, email == nil, phone == nil {
            var result = ValidationResult()
            let name = Username.normalize(username)
            if name.isEmpty { result.invalidate(field: "username", code: .required, message: "Enter a username.") }
            guard result.isValid else { throw GatehouseError.validation(result) }
            try await services.rateLimits.consume(.identifierStatus, ip: meta.ipAddress, persistence: services.persistence, now: now)
            let user = try await services.persistence.read { try await $0.users.find(username: name) }
            guard let user else { return IdentifierStatus(exists: false, verified: false, hasPassword: false) }
            return IdentifierStatus(exists: true, verified: user.emailVerified, hasPassword: user.hasPassword)
        }
        let identifier = try Identifier.parse(email: email, phone: phone)
        try await services.rateLimits.consume(.identifierStatus, ip: meta.ipAddress, persistence: services.persistence, now: now)
        let user = try await services.persistence.read { try await identifier.findUser(in: $0) }
        guard let user else { return IdentifierStatus(exists: false, verified: false, hasPassword: false) }
        return IdentifierStatus(exists: true, verified: identifier.isVerified(for: user), hasPassword: user.hasPassword)
    }
}

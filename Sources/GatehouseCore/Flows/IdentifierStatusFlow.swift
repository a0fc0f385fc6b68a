import Foundation
import GatehouseAPI

/// Whether an email or phone has an account: off by default per client (it tells who has one).
public struct IdentifierStatusFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// Off by default per client (it tells who has an account); rate limited per IP when on.
    public func identifierStatus(email: String?, phone: String?, clientID: String?, meta: RequestMeta) async throws
        -> IdentifierStatus
    {
        let client = try await services.clients.resolve(clientID)
        guard client.settings.identifierStatus.isOn else {
            throw GatehouseError.featureNotEnabled("This client does not offer identifier status.")
        }
        let identifier = try Identifier.parse(email: email, phone: phone)
        let now = services.clock.now()
        // Callers without a known address share one bucket rather than escape the limit.
        do {
            let bucket = meta.ipAddress.map(LoginThrottle.addressBlock) ?? "unknown"
            let count = try await services.persistence.transaction { stores in
                try await stores.attempts.recordFailure(key: "status:ip:" + bucket, now: now, window: 60)
            }
            if count.count > services.settings.identifierStatusPerMinute {
                throw GatehouseError.rateLimited(retryAfter: max(1, Int(count.windowStart.addingTimeInterval(60).timeIntervalSince(now).rounded(.up))))
            }
        }
        let user = try await services.persistence.read { try await identifier.findUser(in: $0) }
        guard let user else { return IdentifierStatus(exists: false, verified: false, hasPassword: false) }
        return IdentifierStatus(exists: true, verified: identifier.isVerified(for: user), hasPassword: user.hasPassword)
    }
}

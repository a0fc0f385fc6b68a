import Foundation
import GatehouseAPI

/// The stored config of a federated identity: who the provider says the user is.
struct FederatedIdentity: Codable, Sendable {
    var provider: String
    var subject: String
    /// The email the provider gave at linking time, for the user's list of identities.
    var email: String?

    /// The credential's lookup key (`provider:subject`), the provider's address if it is one, and the
    /// config to store: the same for a sign-in and a link.
    static func of(_ claims: FederatedClaims, provider: SocialProvider) throws -> (identifier: String, email: String?, config: String) {
        let email = claims.email.map(EmailAddress.normalize).flatMap { EmailAddress.isValid($0) ? $0 : nil }
        let config = try CredentialRecord.encodeConfig(FederatedIdentity(provider: provider.id, subject: claims.subject, email: email))
        return (provider.id + ":" + claims.subject, email, config)
    }
}

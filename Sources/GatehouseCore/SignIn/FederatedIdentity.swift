import Foundation
import GatehouseAPI

/// The stored config of a federated identity: who the provider says the user is, and what the
/// operator chose to keep of the provider's answer.
struct FederatedIdentity: Codable, Sendable {
    var provider: String
    var subject: String
    /// The email the provider gave at linking time, for the user's list of identities.
    var email: String?
    /// The provider's last answer about the person (``SocialProvider/keepProfile``).
    var profile: [String: JSONValue]?
    /// The provider's tokens (``ProviderGrant``), sealed under the server secret
    /// (``SocialProvider/keepTokens``); `gatehouse secret rotate` reseals them.
    var sealedTokens: String?

    private enum CodingKeys: String, CodingKey {
        case provider, subject, email, profile
        case sealedTokens = "sealed_tokens"
    }

    init(provider: String, subject: String, email: String?, profile: [String: JSONValue]? = nil, sealedTokens: String? = nil) {
        self.provider = provider
        self.subject = subject
        self.email = email
        self.profile = profile
        self.sealedTokens = sealedTokens
    }

    /// The credential's lookup key (`provider:subject`), the provider's address if it is one, and the
    /// config to store: the same for a sign-in and a link.
    static func of(
        _ claims: FederatedClaims, provider: SocialProvider, secret: ServerSecret
    ) throws -> (identifier: String, email: String?, config: String) {
        let email = claims.email.map(EmailAddress.normalize).flatMap { EmailAddress.isValid($0) ? $0 : nil }
        let identity = FederatedIdentity(
            provider: provider.id, subject: claims.subject, email: email, profile: provider.keepProfile ? claims.profile : nil,
            sealedTokens: try provider.keepTokens ? claims.grant?.sealed(with: secret) : nil)
        return (provider.id + ":" + claims.subject, email, try CredentialRecord.encodeConfig(identity))
    }

    /// The stored config after another sign-in with `claims`, or nil when nothing changes: the
    /// provider's new profile and tokens replace the kept ones (a grant without a refresh token keeps
    /// the stored one), and what the operator no longer keeps is dropped.
    static func updatedConfig(_ stored: String, claims: FederatedClaims, provider: SocialProvider, secret: ServerSecret) throws -> String? {
        // Most sign-ins: a provider that keeps nothing and a row that holds nothing kept, no JSON work.
        guard provider.keepTokens || provider.keepProfile || stored.contains("\"sealed_tokens\"") || stored.contains("\"profile\"")
        else { return nil }
        guard var identity = try? JSONDecoder().decode(FederatedIdentity.self, from: Data(stored.utf8)) else { return nil }
        identity.profile = provider.keepProfile ? claims.profile ?? identity.profile : nil
        if !provider.keepTokens {
            identity.sealedTokens = nil
        } else if var grant = claims.grant {
            if grant.refreshToken == nil {
                grant.refreshToken = identity.sealedTokens.flatMap { try? ProviderGrant.opened($0, with: secret) }?.refreshToken
            }
            identity.sealedTokens = try grant.sealed(with: secret)
        }
        let config = try CredentialRecord.encodeConfig(identity)
        return config == stored ? nil : config
    }
}

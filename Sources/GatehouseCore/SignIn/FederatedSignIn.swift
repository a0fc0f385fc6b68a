import Foundation
import GatehouseAPI

/// A provider's word on who the person is (a native ID token or access token, the web flow's code
/// exchange), as a sign-in the runner runs, with ``SocialAccounts``' rules for the account: a known
/// identity signs its user in, a verified address links to its verified account, anything else makes
/// an account.
struct FederatedSignIn: SignInStrategy {
    let services: CoreServices

    struct Submission: Sendable {
        var provider: SocialProvider
        /// The name the app or the provider's form post sent beside the token (Apple sends it once).
        var givenName: String?
        var familyName: String?
        /// Checks the provider's token or code, counted by its caller, and answers who the person is.
        var claims: @Sendable () async throws -> FederatedClaims
    }

    struct Admitted: Sendable {
        var claims: FederatedClaims
        var provider: SocialProvider
        var identifier: String
        var email: String?
        var config: String
        var known: UserRecord?
        var isNew: Bool
        var profile: Profile
    }

    /// The provider's check comes first here: only its answer names the account.
    func admit(_ submission: Submission, client: ClientRecord, meta: RequestMeta, hooked: Bool) async throws -> Admitted {
        let provider = submission.provider
        let claims = try await submission.claims()
        let (identifier, email, config) = try FederatedIdentity.of(claims, provider: provider, secret: services.secret)
        let known = try await services.persistence.read { stores -> (CredentialRecord?, UserRecord?) in
            let credential = try await stores.credentials.find(type: .oidc, identifier: identifier)
            if let credential { return (credential, try await stores.users.find(id: credential.userID)) }
            return (nil, try await email.asyncMap { try await stores.users.find(email: $0) } ?? nil)
        }
        let isNew = known.0 == nil && known.1 == nil
        if known.0 == nil, let existing = known.1, !(claims.emailVerified && existing.emailVerified) {
            throw GatehouseError.identityLinkRequired
        }
        if isNew {
            try await services.rateLimits.consume(.signup, ip: meta.ipAddress, persistence: services.persistence, now: services.clock.now())
        }
        var profile = Profile()
        profile.givenName = submission.givenName ?? claims.givenName
        profile.familyName = submission.familyName ?? claims.familyName
        profile.name = claims.name ?? [profile.givenName, profile.familyName].compactMap { $0 }.joined(separator: " ").nilIfEmpty
        return Admitted(
            claims: claims, provider: provider, identifier: identifier, email: email, config: config, known: known.1, isNew: isNew,
            profile: profile)
    }

    func beforeHook(_ admitted: Admitted) -> SignInHook {
        SignInHook(
            point: admitted.isNew ? .signup : .login, method: "social:" + admitted.provider.id, identifier: admitted.email,
            userID: admitted.known?.id, profile: admitted.isNew ? admitted.profile : nil)
    }

    /// The provider's token was checked in ``admit(_:client:meta:hooked:)``.
    func prove(_ submission: Submission, admitted: Admitted, client: ClientRecord, meta: RequestMeta) async throws -> Admitted {
        admitted
    }

    func account(
        for admitted: Admitted, changes: HookChanges, client: ClientRecord, now: Date, stores: any Stores
    ) async throws -> AccountMatch {
        var profile = admitted.profile
        if let changed = changes.profile { profile.merge(changed) }
        var isNew = false
        let user: UserRecord
        let credentialID: String
        if var credential = try await stores.credentials.find(type: .oidc, identifier: admitted.identifier),
            let owner = try await stores.users.find(id: credential.userID)
        {
            user = owner
            credentialID = credential.id
            if let config = try FederatedIdentity.updatedConfig(
                credential.config, claims: admitted.claims, provider: admitted.provider, secret: services.secret)
            {
                credential.config = config
                credential.updatedAt = now
                try await stores.credentials.update(credential)
            }
        } else {
            if let existing = admitted.known {
                user = existing
            } else {
                let email = admitted.email
                user = UserRecord(
                    email: email, emailVerified: email != nil && admitted.claims.emailVerified, profile: profile,
                    appMetadata: changes.appMetadata, createdAt: now)
                do {
                    try await stores.users.insert(user)
                } catch StoreError.conflict {
                    // The address was taken between the read and now: the same rule as above.
                    throw GatehouseError.identityLinkRequired
                }
                isNew = true
            }
            let credential = CredentialRecord(
                userID: user.id, type: .oidc, identifiers: [admitted.identifier], config: admitted.config, createdAt: now)
            try await stores.credentials.insert(credential)
            credentialID = credential.id
        }
        // The provider vouches for the identity; a client's verified-email rule concerns passwords.
        return AccountMatch(
            user: user, amr: [AuthenticationMethod.federated], isNew: isNew, credentialID: credentialID, provesIdentifier: true,
            point: isNew ? .signup : .login, method: "social:" + admitted.provider.id, identifier: admitted.email)
    }
}

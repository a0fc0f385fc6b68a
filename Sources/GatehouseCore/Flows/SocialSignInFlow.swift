import Foundation
import GatehouseAPI

/// Sign-in with a social provider's ID token (Sign in with Apple, Google, any OpenID Connect
/// provider), as the provider's native SDK hands it to the app. The federated identity is a
/// credential of type `oidc` whose identifier is `provider:subject`: stable even when the provider's
/// email changes.
///
/// - A known identity signs its user in (`is_new` false).
/// - An unknown identity whose verified email belongs to an account with a verified email is linked
///   to that account; if either side has not proved the address, the answer is
///   `identity_link_required` and nothing is linked (no silent takeover).
/// - Otherwise a new account is made (`is_new` true), verified only as far as the provider asserts.
public struct SocialSignInFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    public struct Request: Sendable {
        public var providerID: String
        public var idToken: String
        /// The raw nonce the app generated; the token carries it or its SHA-256.
        public var nonce: String
        public var clientID: String?
        /// The name the app got from the provider's SDK on the first sign-in (Apple sends it once, not
        /// in the token).
        public var givenName: String?
        public var familyName: String?
        public var meta: RequestMeta

        public init(
            providerID: String, idToken: String, nonce: String, clientID: String?, givenName: String? = nil, familyName: String? = nil,
            meta: RequestMeta
        ) {
            self.providerID = providerID
            self.idToken = idToken
            self.nonce = nonce
            self.clientID = clientID
            self.givenName = givenName
            self.familyName = familyName
            self.meta = meta
        }
    }

    public func signIn(_ request: Request) async throws -> TokenResponse {
        let client = try await services.clients.resolve(request.clientID)
        guard let provider = services.social.providers[request.providerID], client.settings.socialProviders.contains(provider.id),
            let verifier = services.social.verifier
        else { throw GatehouseError.providerNotEnabled }
        var result = ValidationResult()
        if request.nonce.isEmpty || request.nonce.count > 256 {
            result.invalidate(field: "nonce", code: .required, message: "Send the raw nonce the provider's token was requested with.")
        }
        for (field, value) in [("given_name", request.givenName), ("family_name", request.familyName)] where (value?.count ?? 0) > 200 {
            result.invalidate(field: field, code: .tooLong, message: "Use at most 200 characters.")
        }
        guard result.isValid else { throw GatehouseError.validation(result) }
        let meta = request.meta
        let now = services.clock.now()
        try await services.rateLimits.consume(.codeVerify, ip: meta.ipAddress, persistence: services.persistence, now: now)

        let claims: FederatedClaims
        do {
            claims = try await verifier.verify(request.idToken, provider: provider, nonce: request.nonce, now: now)
            // A nonce is good once: a token captured on its way to us cannot be played again.
            let key = "social-nonce:" + Secrets.sha256Hex(provider.id + "\u{0}" + request.nonce)
            let uses = try await services.persistence.transaction { stores in
                try await stores.attempts.recordFailure(key: key, now: now, window: 24 * 3600)
            }
            if uses.count > 1 { throw IDTokenError.replayed }
        } catch let error as IDTokenError {
            services.logger.info(
                "provider token refused",
                metadata: ["provider": "\(provider.id)", "reason": "\(error)", "client_id": "\(client.id)"])
            await services.audit(
                AuditEvent(
                    at: now, type: AuditEvent.signInFailed, clientID: client.id, method: "social:" + provider.id, reason: "\(error)",
                    addressBlock: meta.ipAddress.map(LoginThrottle.addressBlock), userAgent: meta.userAgent, requestID: meta.requestID))
            throw GatehouseError.invalidProviderToken
        } catch let error as GatehouseError {
            throw error
        } catch {
            // The provider's keys could not be fetched or read: its outage, not the app's fault.
            services.logger.warning(
                "provider keys unavailable", metadata: ["provider": "\(provider.id)", "error": "\(String(describing: error).prefix(300))"])
            throw GatehouseError.providerUnavailable
        }

        let identifier = provider.id + ":" + claims.subject
        let email = claims.email.map(EmailAddress.normalize).flatMap { EmailAddress.isValid($0) ? $0 : nil }
        let known = try await services.persistence.read { stores -> (CredentialRecord?, UserRecord?) in
            let credential = try await stores.credentials.find(type: .oidc, identifier: identifier)
            if let credential { return (credential, try await stores.users.find(id: credential.userID)) }
            return (nil, try await email.asyncMap { try await stores.users.find(email: $0) } ?? nil)
        }
        let isNew = known.0 == nil && known.1 == nil
        if known.0 == nil, let existing = known.1, !(claims.emailVerified && existing.emailVerified) {
            throw GatehouseError.identityLinkRequired
        }
        if isNew { try await services.rateLimits.consume(.signup, ip: meta.ipAddress, persistence: services.persistence, now: now) }

        var profile = Profile()
        profile.givenName = request.givenName ?? claims.givenName
        profile.familyName = request.familyName ?? claims.familyName
        profile.name = claims.name ?? [profile.givenName, profile.familyName].compactMap { $0 }.joined(separator: " ").nilIfEmpty
        let method = "social:" + provider.id
        let changes = try await services.hooks.before(
            HookEvent(point: isNew ? .signup : .login, clientID: client.id, method: method, identifier: email, profile: isNew ? profile : nil, meta: meta))
        if let changed = changes.profile { profile.merge(changed) }

        let config = try CredentialRecord.encodeConfig(FederatedIdentity(provider: provider.id, subject: claims.subject, email: email))
        let scopes = SessionIssuer.grant(requested: nil, client: client)
        let issuer = services.issuer
        let finalProfile = profile
        let (user, started, event) = try await services.persistence.transaction { stores -> (UserRecord, SessionIssuer.Started, HookEvent) in
            var user: UserRecord
            var credentialID: String
            if let credential = try await stores.credentials.find(type: .oidc, identifier: identifier),
                let owner = try await stores.users.find(id: credential.userID)
            {
                user = owner
                credentialID = credential.id
            } else {
                if let existing = known.1 {
                    user = existing
                } else {
                    user = UserRecord(
                        email: email, emailVerified: email != nil && claims.emailVerified, profile: finalProfile,
                        appMetadata: changes.appMetadata, createdAt: now)
                    do {
                        try await stores.users.insert(user)
                    } catch StoreError.conflict {
                        // The address was taken between the read and now: the same rule as above.
                        throw GatehouseError.identityLinkRequired
                    }
                }
                let credential = CredentialRecord(userID: user.id, type: .oidc, identifiers: [identifier], config: config, createdAt: now)
                try await stores.credentials.insert(credential)
                credentialID = credential.id
            }
            guard user.state == .active else { throw GatehouseError.accountDisabled }
            try await stores.users.recordLogin(id: user.id, at: now)
            user.lastLoginAt = now
            if !isNew, let metadata = changes.appMetadata {
                user.appMetadata = (user.appMetadata ?? [:]).merging(metadata) { $1 }
                try await stores.users.update(user)
            }
            let event = HookEvent(point: isNew ? .signup : .login, clientID: client.id, method: method, identifier: email, userID: user.id, meta: meta)
            try await services.recordEvent(event, stores: stores)
            let started = try await issuer.start(
                user: user, client: client, amr: [AuthenticationMethod.federated], scopes: scopes, meta: meta, stores: stores,
                credentialID: credentialID)
            return (user, started, event)
        }
        await services.hooks.after(event)
        return try await issuer.response(
            session: started.session, refreshToken: started.refreshToken, client: client, user: user, isNew: isNew)
    }
}

/// The stored config of a federated identity: who the provider says the user is.
struct FederatedIdentity: Codable, Sendable {
    var provider: String
    var subject: String
    /// The email the provider gave at linking time, for the user's list of identities.
    var email: String?
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}

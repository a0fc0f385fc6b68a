import Foundation
import GatehouseAPI

/// Email + password sign-in.
public struct LoginFlow: Sendable {
    let services: CoreServices
    let clients: ClientResolver
    let issuer: SessionIssuer
    let throttle: LoginThrottle

    public init(services: CoreServices) {
        self.services = services
        self.clients = ClientResolver(services: services)
        self.issuer = SessionIssuer(services: services)
        self.throttle = LoginThrottle(policy: services.settings.throttle)
    }

    public func login(_ request: LoginRequest, meta: RequestMeta) async throws -> TokenResponse {
        let client = try await clients.resolve(request.clientId)
        if let nonce = request.nonce, nonce.count > 256 {
            throw GatehouseError.validation(field: "nonce", code: .tooLong, message: "Use at most 256 characters.")
        }
        let email = EmailAddress.normalize(request.email)
        // Shape errors come before any lookup, and cost no hash: they reveal nothing about accounts.
        guard !email.isEmpty, !request.password.isEmpty else {
            throw GatehouseError.invalidCredentials
        }
        guard request.password.utf8.count <= services.settings.passwordPolicy.maxBytes,
            email.utf8.count <= EmailAddress.maxLength
        else { throw GatehouseError.invalidCredentials }

        let now = services.clock.now()
        let found = try await services.persistence.read { stores -> (UserRecord, CredentialRecord?)? in
            try await throttle.check(email: email, ip: meta.ipAddress, stores: stores, now: now)
            guard let user = try await stores.users.find(email: email) else { return nil }
            return (user, try await stores.credentials.find(userID: user.id, kind: .password))
        }

        // Unknown email and wrong password do the same work and give the same answer.
        guard let (user, credential) = found, let credential else {
            try await services.hasher.verifyDummy(request.password)
            try await recordFailure(email: email, meta: meta, now: now)
            throw GatehouseError.invalidCredentials
        }
        guard case .match(let rehash) = try await services.hasher.verify(request.password, against: credential.secret)
        else {
            try await recordFailure(email: email, meta: meta, now: now)
            throw GatehouseError.invalidCredentials
        }
        guard user.state == .active else { throw GatehouseError.accountDisabled }
        if client.settings.emailVerification == .required, !user.emailVerified {
            throw GatehouseError.emailNotVerified
        }

        let scopes = SessionIssuer.grant(requested: request.scope, client: client)
        let signedIn = now
        let started = try await services.persistence.transaction { stores in
            if let rehash {
                var upgraded = credential
                upgraded.secret = rehash
                upgraded.updatedAt = signedIn
                try await stores.credentials.upsert(upgraded)
            }
            try await throttle.recordSuccess(email: email, stores: stores)
            try await stores.users.recordLogin(id: user.id, at: signedIn)
            return try await issuer.start(
                user: user, client: client, amr: ["pwd"], scopes: scopes, meta: meta, stores: stores)
        }
        var shown = user
        shown.lastLoginAt = signedIn
        return try await issuer.response(
            session: started.session, refreshToken: started.refreshToken, client: client, user: shown, isNew: false,
            nonce: request.nonce)
    }

    private func recordFailure(email: String, meta: RequestMeta, now: Date) async throws {
        try await services.persistence.transaction { stores in
            try await throttle.recordFailure(email: email, ip: meta.ipAddress, stores: stores, now: now)
        }
    }
}

import Foundation
import GatehouseAPI

/// The signed-in user's own account: profile and password.
public struct AccountFlow: Sendable {
    let services: CoreServices
    let throttle: LoginThrottle

    public init(services: CoreServices) {
        self.services = services
        self.throttle = LoginThrottle(policy: services.settings.throttle)
    }

    /// Merges the given fields into the profile; fields left out keep their value.
    public func updateProfile(_ principal: Principal, _ update: Profile) async throws -> User {
        let now = services.clock.now()
        var result = ValidationResult()
        ProfileValidator().validate(update, now: now, into: &result)
        guard result.isValid else { throw GatehouseError.validation(result) }
        let userID = principal.user.id
        return try await services.persistence.transaction { stores in
            guard var user = try await stores.users.find(id: userID) else {
                throw GatehouseError.unauthorized("The session has ended.", code: .sessionRevoked)
            }
            user.profile.merge(update)
            user.updatedAt = now
            try await stores.users.update(user)
            return user.wire
        }
    }

    /// Sets a new password. The current one is required unless the session came from recovery in the
    /// last few minutes. Every other session of the user ends.
    public func changePassword(_ principal: Principal, _ request: PasswordChangeRequest, meta: RequestMeta) async throws {
        let now = services.clock.now()
        let user = principal.user
        var result = ValidationResult()
        services.settings.passwordPolicy.validate(request.password, email: user.email, into: &result)
        guard result.isValid else { throw GatehouseError.validation(result) }

        let credential = try await services.persistence.read {
            try await $0.credentials.find(userID: user.id, kind: .password)
        }
        let viaRecovery = principal.session.amr.contains("recovery")
            && now.timeIntervalSince(principal.session.createdAt) <= services.settings.recoveryPasswordWindow
        if let credential, !viaRecovery {
            guard let current = request.currentPassword, !current.isEmpty else {
                throw GatehouseError.validation(
                    field: "current_password", code: .required, message: "Enter your current password.")
            }
            let throttleKey = user.email ?? user.id.uuidString
            try await services.persistence.read { stores in
                try await throttle.check(email: throttleKey, ip: meta.ipAddress, stores: stores, now: now)
            }
            guard current.utf8.count <= services.settings.passwordPolicy.maxBytes,
                case .match = try await services.hasher.verify(current, against: credential.secret)
            else {
                try await services.persistence.transaction { stores in
                    try await throttle.recordFailure(email: throttleKey, ip: meta.ipAddress, stores: stores, now: now)
                }
                throw GatehouseError.validation(
                    field: "current_password", code: .invalidCredentials, message: "The current password is wrong.")
            }
        }
        let hash = try await services.hasher.hash(request.password)
        let sessionID = principal.session.id
        try await services.persistence.transaction { stores in
            try await stores.credentials.upsert(
                CredentialRecord(
                    userID: user.id, kind: .password, secret: hash, createdAt: credential?.createdAt ?? now,
                    updatedAt: now))
            _ = try await stores.sessions.revokeAll(userID: user.id, except: sessionID, at: now, reason: .passwordChanged)
            if let email = user.email {
                try await VerificationMessages(services: services).enqueue(
                    kind: "password_changed", to: email, locale: user.profile.locale ?? meta.acceptLanguage,
                    variables: [:], stores: stores)
            }
        }
    }
}

extension Profile {
    /// PATCH semantics: every field present in `update` replaces ours.
    mutating func merge(_ update: Profile) {
        if let v = update.name { name = v }
        if let v = update.givenName { givenName = v }
        if let v = update.familyName { familyName = v }
        if let v = update.birthdate { birthdate = v }
        if let v = update.picture { picture = v }
        if let v = update.locale { locale = v }
        if let v = update.metadata { metadata = v }
    }
}

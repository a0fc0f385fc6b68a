import Foundation
import GatehouseAPI

/// The signed-in user's own account: profile and password.
public struct AccountFlow: Sendable {
    let services: CoreServices

    public init(services: CoreServices) { self.services = services }

    /// Merges the given fields into the profile; fields left out keep their value.
    public func updateProfile(_ principal: Principal, _ update: Profile, meta: RequestMeta) async throws -> User {
        try await updateProfile(userID: principal.user.id, clientID: principal.session.clientID, update, meta: meta)
    }

    /// The same rules for the hosted required-fields page, where a browser session stands for the user.
    public func updateProfile(userID: UUID, clientID: String, _ update: Profile, meta: RequestMeta) async throws -> User {
        let now = services.clock.now()
        var result = ValidationResult()
        ProfileValidator().validate(update, now: now, into: &result)
        if update.metadata != nil {
            // The update replaces the metadata whole: what it sends is what the schema sees.
            MetadataSchema.check(update.metadata, client: try await services.clients.resolve(clientID), into: &result)
        }
        guard result.isValid else { throw GatehouseError.validation(result) }
        let event = HookEvent(
            point: .profileUpdate, clientID: clientID, userID: userID, profile: update, meta: meta)
        let changes = try await services.hooks.before(event)
        var merged = update
        if let changed = changes.profile {
            merged.merge(changed)
            try ProfileValidator.requireValid(merged, now: now)
        }
        let applied = merged
        let updated = try await services.persistence.transaction { stores in
            guard var user = try await stores.users.find(id: userID) else {
                throw GatehouseError.unauthorized("The session has ended.", code: .sessionRevoked)
            }
            user.profile.merge(applied)
            if let metadata = changes.appMetadata { user.appMetadata = (user.appMetadata ?? [:]).merging(metadata) { $1 } }
            user.updatedAt = now
            try await stores.users.update(user)
            try await services.recordEvent(event, stores: stores)
            return user.wire
        }
        await services.hooks.after(event)
        return updated
    }

    /// Sets a new password. The current one is required unless the session came from recovery in the
    /// last few minutes. Every other session of the user ends.
    public func changePassword(_ principal: Principal, _ request: PasswordChange, meta: RequestMeta) async throws {
        let now = services.clock.now()
        let user = principal.user
        var result = ValidationResult()
        let client = try? await services.clients.resolve(principal.session.clientID)
        await services.passwordScreen.check(request.password, email: user.email, appName: client?.name, into: &result)
        guard result.isValid else { throw GatehouseError.validation(result) }
        try await FactorsFlow.requireSecondLevel(principal, services: services)

        let password = services.password
        let throttle = services.throttle
        let credential = try await services.persistence.read { try await password.find(userID: user.id, stores: $0) }
        let viaRecovery =
            principal.session.amr.contains(AuthenticationMethod.recovery)
            && now.timeIntervalSince(principal.session.createdAt) <= services.settings.recoveryPasswordWindow
        if let credential, !viaRecovery {
            guard let current = request.currentPassword, !current.isEmpty else {
                throw GatehouseError.validation(
                    field: "current_password", code: .required, message: "Enter your current password.")
            }
            let throttleKey = user.email ?? user.id.uuidString
            // Counted before the check, like a sign-in: a stolen session cannot guess faster.
            let attempt = try await services.persistence.transaction { stores in
                try await throttle.begin(email: throttleKey, ip: meta.ipAddress, stores: stores, now: now)
            }
            let verification = try await throttle.givingBackWhenBusy(attempt, persistence: services.persistence) {
                try await password.check(current, against: credential)
            }
            guard case .verified = verification else {
                _ = try await services.persistence.transaction { stores in
                    let failures = try await stores.credentials.recordFailure(id: credential.id, at: now)
                    try await throttle.failed(attempt, stores: stores, now: now)
                    return failures
                }
                throw GatehouseError.validation(
                    field: "current_password", code: .invalidCredentials, message: "The current password is wrong.")
            }
            try await services.persistence.transaction { try await throttle.succeeded(attempt, stores: $0) }
        }
        let hash = try await password.hash(request.password)
        let sessionID = principal.session.id
        let changed = HookEvent(
            point: .passwordChange, clientID: principal.session.clientID, method: "password", identifier: user.email, userID: user.id,
            meta: meta)
        try await services.persistence.transaction { stores in
            try await password.setPassword(hash: hash, for: user, now: now, stores: stores)
            try await services.recordEvent(changed, stores: stores)
            _ = try await stores.endAllSessions(
                of: user.id, except: sessionID, at: now, reason: .passwordChanged, notices: services.notices)
            if let email = user.email {
                try await VerificationMessages(services: services).enqueue(
                    kind: "password_changed", to: email, locale: user.profile.locale ?? meta.acceptLanguage,
                    variables: [:], stores: stores)
            }
        }
        await services.hooks.after(changed)
    }

    /// A password change as the core takes it.
    public struct PasswordChange: Sendable {
        /// Required unless the session came from recovery a few minutes ago.
        public var currentPassword: String?
        public var password: String

        public init(currentPassword: String?, password: String) {
            self.currentPassword = currentPassword
            self.password = password
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
        if let v = update.middleName { middleName = v }
        if let v = update.nickname { nickname = v }
        if let v = update.preferredUsername { preferredUsername = v }
        if let v = update.profileURL { profileURL = v }
        if let v = update.website { website = v }
        if let v = update.gender { gender = v }
        if let v = update.zoneinfo { zoneinfo = v }
        if let v = update.address { address = v }
    }
}

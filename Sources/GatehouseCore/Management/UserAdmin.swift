import Foundation
import GatehouseAPI

/// Operators' work on user accounts, shared by the admin API and the CLI. Every change writes its
/// audit event (`admin.user.…`, with the actor) in the change's own transaction.
public struct UserAdmin: Sendable {
    let persistence: any Persistence
    let clock: any WallClock
    /// The running server's services: creating a user (password policy, hashing) and sending mail need
    /// them; the CLI, which has only the database, does without.
    let services: CoreServices?
    /// Back-channel logout for the sessions an operator's action ends (the CLI seals them with the
    /// server secret file, as the server would).
    let notices: LogoutNotices

    public init(services: CoreServices) {
        self.persistence = services.persistence
        self.clock = services.clock
        self.services = services
        self.notices = services.notices
    }

    public init(persistence: any Persistence, clock: any WallClock, secret: ServerSecret) {
        self.persistence = persistence
        self.clock = clock
        self.services = nil
        self.notices = LogoutNotices(secret: secret)
    }

    private func server() throws -> CoreServices {
        guard let services else { throw GatehouseError.notReady("This needs the running server: use the admin API.") }
        return services
    }

    public func search(_ search: UserSearch) async throws -> [UserRecord] {
        try await persistence.read { try await $0.directory.search(search) }
    }

    public func show(id: UUID) async throws -> UserRecord {
        guard let user = try await persistence.read({ try await $0.users.find(id: id) }) else { throw Self.noSuchUser }
        return user
    }

    /// A user made by an operator: email and/or phone, optionally a password (the password policy
    /// applies) and verified flags, a profile and app metadata.
    public func create(_ draft: UserDraft, actor: AdminActor) async throws -> UserRecord {
        let services = try server()
        let now = clock.now()
        var result = ValidationResult()
        let email = draft.email.map { EmailAddress.validate($0, into: &result) }
        let phone = draft.phone.map { PhoneNumber.validate($0, into: &result) }
        if email == nil && phone == nil {
            result.invalidate(field: "email", code: .required, message: "An email or a phone number is required.")
        }
        if let profile = draft.profile { ProfileValidator().validate(profile, now: now, into: &result) }
        if let metadata = draft.appMetadata, !ProfileValidator.fits(appMetadata: metadata) {
            result.invalidate(field: "app_metadata", code: .tooLong, message: "app_metadata is limited to 16 KiB.")
        }
        if let password = draft.password { await services.passwordScreen.check(password, email: email, appName: nil, into: &result) }
        guard result.isValid else { throw GatehouseError.validation(result) }
        var hash: String?
        if let password = draft.password { hash = try await services.password.hash(password) }
        let user = UserRecord(
            email: email, emailVerified: email != nil && draft.emailVerified, phone: phone,
            phoneVerified: phone != nil && draft.phoneVerified, profile: draft.profile ?? Profile(), appMetadata: draft.appMetadata,
            createdAt: now, hasPassword: hash != nil)
        let passwordHash = hash
        do {
            try await persistence.transaction { stores in
                try await stores.users.insert(user)
                if let passwordHash {
                    try await stores.credentials.insert(try PasswordStrategy.credential(for: user, hash: passwordHash, now: now))
                }
                try await stores.audit.append(actor.event("user.created", at: now, userID: user.id))
            }
        } catch StoreError.conflict {
            throw GatehouseError.alreadyRegistered
        }
        return user
    }

    /// Changes what the operator sent: contact details (the password then answers to the new ones),
    /// verified flags, the profile (merged, as `PATCH /v1/me` does) and app metadata (replaced whole).
    public func update(id: UUID, _ change: UserChange, actor: AdminActor) async throws -> UserRecord {
        let now = clock.now()
        var result = ValidationResult()
        let email = change.email.map { EmailAddress.validate($0, into: &result) }
        let phone = change.phone.map { PhoneNumber.validate($0, into: &result) }
        if let profile = change.profile { ProfileValidator().validate(profile, now: now, into: &result) }
        if let metadata = change.appMetadata, !ProfileValidator.fits(appMetadata: metadata) {
            result.invalidate(field: "app_metadata", code: .tooLong, message: "app_metadata is limited to 16 KiB.")
        }
        guard result.isValid else { throw GatehouseError.validation(result) }
        do {
            return try await persistence.transaction { stores in
                guard var user = try await stores.users.find(id: id) else { throw Self.noSuchUser }
                let contactChanged = (email != nil && email != user.email) || (phone != nil && phone != user.phone)
                if let email, email != user.email {
                    if try await stores.users.find(email: email) != nil { throw StoreError.conflict("email") }
                    user.email = email
                    user.emailVerified = false
                }
                if let phone, phone != user.phone {
                    if try await stores.users.find(phone: phone) != nil { throw StoreError.conflict("phone") }
                    user.phone = phone
                    user.phoneVerified = false
                }
                if let verified = change.emailVerified { user.emailVerified = verified && user.email != nil }
                if let verified = change.phoneVerified { user.phoneVerified = verified && user.phone != nil }
                if let profile = change.profile { user.profile.merge(profile) }
                if let metadata = change.appMetadata { user.appMetadata = metadata }
                user.updatedAt = now
                try await stores.users.update(user)
                if contactChanged, var password = try await stores.credentials.list(userID: id, type: .password).first {
                    password.identifiers = PasswordStrategy.identifiers(of: user)
                    password.updatedAt = now
                    try await stores.credentials.update(password)
                }
                try await stores.audit.append(actor.event("user.updated", at: now, userID: id))
                return user
            }
        } catch StoreError.conflict {
            throw GatehouseError.alreadyRegistered
        }
    }

    /// Disabling ends every session and browser session at once; sign-in, refresh and bearer tokens
    /// are refused while the account stays disabled.
    public func setDisabled(id: UUID, _ disabled: Bool, actor: AdminActor) async throws -> UserRecord {
        let now = clock.now()
        return try await persistence.transaction { stores in
            guard var user = try await stores.users.find(id: id) else { throw Self.noSuchUser }
            user.state = disabled ? .disabled : .active
            user.updatedAt = now
            try await stores.users.update(user)
            if disabled {
                _ = try await stores.endAllSessions(of: id, at: now, reason: .adminRevoked, notices: notices)
            }
            try await stores.audit.append(actor.event(disabled ? "user.disabled" : "user.enabled", at: now, userID: id))
            return user
        }
    }

    /// Ends every session (refresh tokens with them) and browser session; returns how many sessions.
    public func signOut(id: UUID, actor: AdminActor) async throws -> Int {
        let now = clock.now()
        return try await persistence.transaction { stores in
            guard try await stores.users.find(id: id) != nil else { throw Self.noSuchUser }
            let ended = try await stores.endAllSessions(of: id, at: now, reason: .adminRevoked, notices: notices)
            try await stores.audit.append(actor.event("user.signed_out", at: now, userID: id, reason: "\(ended) sessions"))
            return ended
        }
    }

    /// Deletes the account and everything kept for it (``UserDirectoryStore/erase(userID:addresses:)``).
    public func delete(id: UUID, actor: AdminActor) async throws {
        let now = clock.now()
        try await persistence.transaction { stores in
            guard let user = try await stores.users.find(id: id) else { throw Self.noSuchUser }
            // The clients' sessions end with the account: tell those that listen before the rows go.
            try await notices.enqueue(for: try await stores.sessions.listLive(userID: id, now: now), stores: stores, now: now)
            _ = try await stores.directory.erase(userID: id, addresses: [user.email, user.phone].compactMap { $0 })
            try await stores.audit.append(actor.event("user.deleted", at: now, userID: id))
        }
    }

    /// Sends the recovery mail (code and link) as `POST /v1/recovery` would, for `clientID` or the
    /// default client.
    public func sendPasswordReset(id: UUID, clientID: String?, actor: AdminActor) async throws {
        let services = try server()
        let user = try await show(id: id)
        guard let email = user.email else { throw GatehouseError.badRequest("The account has no email address.") }
        guard user.state == .active else { throw GatehouseError.accountDisabled }
        try await RecoveryFlow(services: services).request(email: email, clientID: clientID, meta: actor.meta)
        try await persistence.transaction { stores in
            try await stores.audit.append(actor.event("user.password_reset_sent", at: clock.now(), userID: id, clientID: clientID))
        }
    }

    /// A user's sessions, live and ended, newest first.
    public func sessions(id: UUID, limit: Int = 200) async throws -> [SessionRecord] {
        try await persistence.read { stores in
            guard try await stores.users.find(id: id) != nil else { throw Self.noSuchUser }
            return try await stores.directory.sessions(userID: id, limit: limit)
        }
    }

    /// Ends one session, whoever's it is; returns its user.
    public func revokeSession(id: UUID, actor: AdminActor) async throws {
        let now = clock.now()
        try await persistence.transaction { stores in
            guard let session = try await stores.sessions.find(id: id),
                try await stores.endSession(id, at: now, reason: .adminRevoked, notices: notices)
            else { throw GatehouseError.notFound("No live session with this id.") }
            try await stores.audit.append(actor.event("session.revoked", at: now, userID: session.userID, clientID: session.clientID))
        }
    }

    /// Everything kept about one user, for a data-subject request: the account, its credentials by
    /// type and identifiers (never a hash, key or secret), sessions, accepted terms, consents and audit events.
    /// The export itself is audited.
    public func export(id: UUID, actor: AdminActor) async throws -> UserExport {
        let now = clock.now()
        return try await persistence.transaction { stores in
            guard let user = try await stores.users.find(id: id) else { throw Self.noSuchUser }
            let credentials = try await stores.credentials.list(userID: id, type: nil)
            let sessions = try await stores.directory.sessions(userID: id, limit: 1000)
            let agreements = try await stores.directory.agreements(userID: id)
            let consents = try await stores.consents.list(userID: id)
            let events = try await stores.audit.list(AuditQuery(userID: id, limit: 10_000))
            try await stores.audit.append(actor.event("user.exported", at: now, userID: id))
            return UserExport(
                user: user, credentials: credentials, sessions: sessions, agreements: agreements, consents: consents, events: events,
                at: now)
        }
    }

    static let noSuchUser = GatehouseError.notFound("No user with this id.")
}

/// A user as an operator creates one.
public struct UserDraft: Sendable {
    public var email: String?
    public var phone: String?
    public var password: String?
    public var emailVerified: Bool
    public var phoneVerified: Bool
    public var profile: Profile?
    public var appMetadata: [String: JSONValue]?

    public init(
        email: String? = nil, phone: String? = nil, password: String? = nil, emailVerified: Bool = false, phoneVerified: Bool = false,
        profile: Profile? = nil, appMetadata: [String: JSONValue]? = nil
    ) {
        self.email = email
        self.phone = phone
        self.password = password
        self.emailVerified = emailVerified
        self.phoneVerified = phoneVerified
        self.profile = profile
        self.appMetadata = appMetadata
    }
}

/// What an operator changes on a user; nil leaves a field as it is.
public struct UserChange: Sendable {
    public var email: String?
    public var phone: String?
    public var emailVerified: Bool?
    public var phoneVerified: Bool?
    public var profile: Profile?
    public var appMetadata: [String: JSONValue]?

    public init(
        email: String? = nil, phone: String? = nil, emailVerified: Bool? = nil, phoneVerified: Bool? = nil, profile: Profile? = nil,
        appMetadata: [String: JSONValue]? = nil
    ) {
        self.email = email
        self.phone = phone
        self.emailVerified = emailVerified
        self.phoneVerified = phoneVerified
        self.profile = profile
        self.appMetadata = appMetadata
    }
}

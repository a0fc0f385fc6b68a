import Foundation
import GatehouseAPI

/// Terms, agreements, required fields, client information and identifier status: what an app asks
/// to learn what a user still owes before going on.
public struct TermsFlow: Sendable {
    let services: CoreServices
    let clients: ClientResolver

    public init(services: CoreServices) {
        self.services = services
        self.clients = ClientResolver(services: services)
    }

    public static func terms(_ client: ClientRecord) -> Terms {
        let s = client.settings
        return Terms(
            platform: s.termsPlatformVersion.map { TermsDocument(version: $0, url: s.termsPlatformURL) },
            client: s.termsClientVersion.map { TermsDocument(version: $0, url: s.termsClientURL) })
    }

    public func terms(clientID: String?) async throws -> Terms {
        Self.terms(try await clients.resolve(clientID))
    }

    public func clientInfo(clientID: String?) async throws -> ClientInfo {
        let client = try await clients.resolve(clientID)
        let policy = services.settings.passwordPolicy
        return ClientInfo(
            clientId: client.id, name: client.name, methods: client.settings.methods, socialProviders: [],
            terms: Self.terms(client), requiredFields: client.settings.requiredFields,
            passwordPolicy: PasswordRules(minLength: policy.minLength, maxBytes: policy.maxBytes), scopes: client.scopes)
    }

    public func requiredFields(clientID: String?) async throws -> RequiredFields {
        RequiredFields(requiredFields: try await clients.resolve(clientID).settings.requiredFields)
    }

    public func missingFields(_ principal: Principal) async throws -> RequiredFields {
        let client = try await clients.resolve(principal.session.clientID)
        return RequiredFields(requiredFields: Self.missing(user: principal.user, client: client))
    }

    /// The client's required fields the user has left empty.
    public static func missing(user: UserRecord, client: ClientRecord) -> [String] {
        let p = user.profile
        return client.settings.requiredFields.filter { field in
            let value: String? =
                switch field {
                case "name": p.name
                case "given_name": p.givenName
                case "family_name": p.familyName
                case "birthdate": p.birthdate
                case "picture": p.picture
                case "locale": p.locale
                case "phone": user.phone
                default: nil
                }
            return value?.trimmingCharacters(in: .whitespaces).isEmpty ?? true
        }
    }

    public func agreements(_ principal: Principal) async throws -> Agreements {
        let client = try await clients.resolve(principal.session.clientID)
        let record = try await services.persistence.read {
            try await $0.agreements.find(userID: principal.user.id, clientID: client.id)
        }
        return Agreements(
            platformVersion: record?.platformVersion, clientVersion: record?.clientVersion,
            upToDate: AgreementRecord.isUpToDate(record, settings: client.settings))
    }

    /// Records acceptance of the versions the client names now; other versions are refused, so an
    /// app showing stale terms learns it.
    public func accept(_ principal: Principal, _ body: Agreements) async throws {
        let client = try await clients.resolve(principal.session.clientID)
        var result = ValidationResult()
        if body.platformVersion != client.settings.termsPlatformVersion {
            result.invalidate(field: "platform_version", code: .invalidValue, message: "This is not the current platform terms version.")
        }
        if body.clientVersion != client.settings.termsClientVersion {
            result.invalidate(field: "client_version", code: .invalidValue, message: "This is not the current client terms version.")
        }
        guard result.isValid else { throw GatehouseError.validation(result) }
        let now = services.clock.now()
        try await services.persistence.transaction { stores in
            try await Self.accept(userID: principal.user.id, client: client, at: now, stores: stores)
        }
    }

    static func accept(userID: UUID, client: ClientRecord, at now: Date, stores: any Stores) async throws {
        try await stores.agreements.upsert(
            AgreementRecord(
                userID: userID, clientID: client.id, platformVersion: client.settings.termsPlatformVersion,
                clientVersion: client.settings.termsClientVersion, acceptedAt: now))
    }

    /// Off by default per client (it tells who has an account); rate limited per IP when on.
    public func identifierStatus(email: String?, phone: String?, clientID: String?, meta: RequestMeta) async throws
        -> IdentifierStatus
    {
        let client = try await clients.resolve(clientID)
        guard client.settings.identifierStatus.isOn else {
            throw GatehouseError(
                status: 404, code: .notEnabled, title: "Not enabled", detail: "This client does not offer identifier status.")
        }
        let identifier = try OTPFlow.identifier(email: email, phone: phone)
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
        let user = try await services.persistence.read { stores in try await OTPFlow(services: services).find(identifier, stores: stores) }
        guard let user else { return IdentifierStatus(exists: false, verified: false, hasPassword: false) }
        let verified: Bool =
            switch identifier {
            case .email: user.emailVerified
            case .phone: user.phoneVerified
            }
        return IdentifierStatus(exists: true, verified: verified, hasPassword: user.hasPassword)
    }
}

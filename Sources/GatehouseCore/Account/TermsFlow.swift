import Foundation
import GatehouseAPI

/// Terms, agreements, required fields and client information: what an app asks
/// to learn what a user still owes before going on.
public struct TermsFlow: Sendable {
    let services: CoreServices
    let clients: ClientResolver

    public init(services: CoreServices) {
        self.services = services
        self.clients = services.clients
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
            clientId: client.id, name: client.name, methods: client.settings.methods, socialProviders: client.settings.socialProviders,
            terms: Self.terms(client), requiredFields: client.settings.requiredFields,
            passwordPolicy: PasswordRules(minLength: policy.minLength, maxBytes: policy.maxBytes), scopes: client.scopes)
    }

    public func requiredFields(clientID: String?) async throws -> RequiredFields {
        RequiredFields(requiredFields: try await clients.resolve(clientID).settings.requiredFields)
    }

    public func missingFields(_ principal: Principal) async throws -> RequiredFields {
        let client = try await clients.resolve(principal.session.clientID)
        return RequiredFields(requiredFields: RequiredFieldsPolicy.missing(user: principal.user, client: client))
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
        // An acceptance of nothing would answer 204 and record nothing: tell the app instead.
        if client.settings.termsPlatformVersion == nil, client.settings.termsClientVersion == nil {
            result.invalidate(code: .invalidValue, message: "This client has no terms to accept.")
            throw GatehouseError.validation(result)
        }
        if body.platformVersion != client.settings.termsPlatformVersion {
            result.invalidate(field: "platform_version", code: .invalidValue, message: "This is not the current platform terms version.")
        }
        if body.clientVersion != client.settings.termsClientVersion {
            result.invalidate(field: "client_version", code: .invalidValue, message: "This is not the current client terms version.")
        }
        guard result.isValid else { throw GatehouseError.validation(result) }
        let now = services.clock.now()
        try await services.persistence.transaction { stores in
            try await TermsAcceptance.record(userID: principal.user.id, client: client, at: now, stores: stores)
        }
    }
}

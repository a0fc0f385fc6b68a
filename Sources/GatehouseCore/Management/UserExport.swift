import Foundation
import GatehouseAPI

/// One user's data for a data-subject request, as JSON: what the user gave, what was recorded about
/// them, and nothing that would let anyone sign in as them (no password hash, no key, no token or
/// code hash: credentials appear by type, identifiers and dates only).
public struct UserExport: Sendable, Encodable {
    public struct Credential: Sendable, Encodable {
        var id: String
        var type: String
        var identifiers: [String]
        var failureCount: Int
        var createdAt: Date
        var updatedAt: Date
        /// A device authenticator's kind and name, as the user sees them.
        var device: [String: String]?
        /// A provider identity's kept profile (`keep_profile`): personal data the provider gave. Its kept
        /// tokens are not exported (they would let the holder act as the user at the provider).
        var profile: [String: JSONValue]?

        enum CodingKeys: String, CodingKey {
            case id, type, identifiers, device, profile
            case failureCount = "failure_count", createdAt = "created_at", updatedAt = "updated_at"
        }
    }

    public struct Session: Sendable, Encodable {
        /// Lowercase, as tokens' `sid` and `/v1/me/sessions` write it, so an operator can match them.
        var id: String
        var clientId: String
        var amr: [String]
        var scopes: [String]
        var userAgent: String?
        var ipAddress: String?
        var createdAt: Date
        var lastUsedAt: Date
        var expiresAt: Date
        var revokedAt: Date?
        var revokeReason: String?

        enum CodingKeys: String, CodingKey {
            case id, amr, scopes
            case clientId = "client_id", userAgent = "user_agent", ipAddress = "ip_address", createdAt = "created_at"
            case lastUsedAt = "last_used_at", expiresAt = "expires_at", revokedAt = "revoked_at", revokeReason = "revoke_reason"
        }

        public init(_ s: SessionRecord) {
            self.init(
                id: s.id, clientId: s.clientID, amr: s.amr, scopes: s.scopes, userAgent: s.userAgent, ipAddress: s.ipAddress,
                createdAt: s.createdAt, lastUsedAt: s.lastUsedAt, expiresAt: s.expiresAt, revokedAt: s.revokedAt,
                revokeReason: s.revokeReason)
        }

        init(
            id: UUID, clientId: String, amr: [String], scopes: [String], userAgent: String?, ipAddress: String?, createdAt: Date,
            lastUsedAt: Date, expiresAt: Date, revokedAt: Date?, revokeReason: String?
        ) {
            self.id = id.uuidString.lowercased()
            self.clientId = clientId
            self.amr = amr
            self.scopes = scopes
            self.userAgent = userAgent
            self.ipAddress = ipAddress
            self.createdAt = createdAt
            self.lastUsedAt = lastUsedAt
            self.expiresAt = expiresAt
            self.revokedAt = revokedAt
            self.revokeReason = revokeReason
        }
    }

    public struct Agreement: Sendable, Encodable {
        var clientId: String
        var platformVersion: String?
        var clientVersion: String?
        var acceptedAt: Date

        enum CodingKeys: String, CodingKey {
            case clientId = "client_id", platformVersion = "platform_version", clientVersion = "client_version"
            case acceptedAt = "accepted_at"
        }
    }

    public struct Event: Sendable, Encodable {
        var id: String
        var at: Date
        var type: String
        var clientId: String?
        var method: String?
        var reason: String?
        var addressBlock: String?
        var userAgent: String?
        var actor: String?
        var requestId: String?

        enum CodingKeys: String, CodingKey {
            case id, at, type, method, reason, actor
            case clientId = "client_id", addressBlock = "address_block", userAgent = "user_agent", requestId = "request_id"
        }

        public init(_ e: AuditEvent) {
            id = e.id.uuidString.lowercased()
            at = e.at
            type = e.type
            clientId = e.clientID
            method = e.method
            reason = e.reason
            addressBlock = e.addressBlock
            userAgent = e.userAgent
            actor = e.actor
            requestId = e.requestID
        }
    }

    public var exportedAt: Date
    public var user: User
    public var credentials: [Credential]
    public var sessions: [Session]
    public var agreements: [Agreement]
    /// Third-party clients the user consented to on the hosted pages, and to which scopes.
    public var consents: [Consent]
    public var auditEvents: [Event]

    enum CodingKeys: String, CodingKey {
        case user, credentials, sessions, agreements, consents
        case exportedAt = "exported_at", auditEvents = "audit_events"
    }

    init(
        user: UserRecord, credentials: [CredentialRecord], sessions: [SessionRecord], agreements: [AgreementRecord],
        consents: [ConsentRecord],
        events: [AuditEvent], at: Date
    ) {
        self.exportedAt = at
        self.user = user.wire
        self.credentials = credentials.map { credential in
            var device: [String: String]?
            if credential.type == .deviceAuthenticator, let config = try? credential.decodeConfig(DeviceAuthenticatorStrategy.Config.self) {
                device = ["kind": config.kind.rawValue, "device_id": config.deviceID, "name": config.deviceName ?? ""]
            }
            let profile = credential.type == .oidc ? (try? credential.decodeConfig(FederatedIdentity.self))?.profile : nil
            // A recovery code's identifier is its keyed hash: the export names the code by type and date only.
            return Credential(
                id: credential.id, type: credential.type.rawValue,
                identifiers: credential.type == .recoveryCode ? [] : credential.identifiers,
                failureCount: credential.failureCount, createdAt: credential.createdAt, updatedAt: credential.updatedAt, device: device,
                profile: profile)
        }
        self.sessions = sessions.map(Session.init)
        self.agreements = agreements.map {
            Agreement(
                clientId: $0.clientID, platformVersion: $0.platformVersion, clientVersion: $0.clientVersion, acceptedAt: $0.acceptedAt)
        }
        self.consents = consents.map { Consent(clientId: $0.clientID, clientName: nil, scopes: $0.scopes, grantedAt: $0.grantedAt) }
        self.auditEvents = events.map(Event.init)
    }
}

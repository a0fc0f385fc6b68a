import Foundation

/// One security event, appended and never changed. No secret, and no address in clear: the account
/// named by a failed sign-in is a short hash of its identifier (`account`, as in the log), the caller
/// an address block (IPv4 /32 or IPv6 /64).
public struct AuditEvent: Sendable, Hashable {
    public var id: UUID
    public var at: Date
    /// `user.created`, `user.signed_in`, `sign_in.failed`, `sign_in.throttled`, `refresh_token.reused`, …
    public var type: String
    public var userID: UUID?
    public var clientID: String?
    public var method: String?
    /// Why a refusal happened (`invalid_credentials`, `rate_limited`, …).
    public var reason: String?
    /// The first 12 hex digits of SHA-256 of the identifier a failed sign-in named.
    public var account: String?
    public var addressBlock: String?
    public var userAgent: String?
    /// Who acted, for operators' actions: `client:<id>` for an admin API credential, `cli` for the
    /// command line. Nil for a user's own requests (the user is `userID`).
    public var actor: String?
    /// The `Request-Id` of the HTTP request that caused the event (also in the access log).
    public var requestID: String?

    public init(
        id: UUID = UUID(), at: Date, type: String, userID: UUID? = nil, clientID: String? = nil, method: String? = nil,
        reason: String? = nil, account: String? = nil, addressBlock: String? = nil, userAgent: String? = nil,
        actor: String? = nil, requestID: String? = nil
    ) {
        self.id = id
        self.at = at
        self.type = type
        self.userID = userID
        self.clientID = clientID
        self.method = method
        self.reason = reason
        self.account = account
        self.addressBlock = addressBlock
        self.userAgent = userAgent.map { String($0.prefix(256)) }
        self.actor = actor
        self.requestID = requestID.map { String($0.prefix(64)) }
    }

    /// An event a request caused: the caller's address block, user agent and request id come from `meta`.
    public init(
        at: Date, type: String, userID: UUID? = nil, clientID: String? = nil, method: String? = nil, reason: String? = nil,
        account: String? = nil, actor: String? = nil, meta: RequestMeta
    ) {
        self.init(
            at: at, type: type, userID: userID, clientID: clientID, method: method, reason: reason, account: account,
            addressBlock: meta.ipAddress.map(AddressBlock.of), userAgent: meta.userAgent, actor: actor, requestID: meta.requestID
        )
    }

    public static let signInFailed = "sign_in.failed"
    public static let signInThrottled = "sign_in.throttled"
    public static let refreshTokenReused = "refresh_token.reused"
    /// A DPoP-bound refresh token presented without a proof by its key (RFC 9449 §5): copied off the device.
    public static let refreshTokenKeyMismatch = "refresh_token.dpop_mismatch"
    /// A user's access token exchanged for a downstream service's (RFC 8693).
    public static let tokenExchanged = "token.exchanged"
    /// A token exchange refused to an authenticated client (not allowed, foreign audience, wider scope,
    /// an ended or foreign subject): a service probing for more than it was given.
    public static let tokenExchangeRefused = "token.exchange_refused"
    public static let codeSent = "code.sent"
    public static let codeFailed = "code.failed"
    public static let authenticatorRegistered = "authenticator.registered"
    public static let factorEnrolled = "mfa.enrolled"
    public static let factorRemoved = "mfa.removed"
    public static let recoveryCodeUsed = "mfa.recovery_code_used"
    public static let recoveryCodesRegenerated = "mfa.recovery_codes_regenerated"
    /// A credential refused and marked as suspect (a passkey whose signature counter went backwards).
    public static let credentialFlagged = "credential.flagged"
    /// Passkeys are enrolled and removed as factors are (`mfa.enrolled`, `mfa.removed`, method
    /// `passkey`); a new name is audited alone.
    public static let passkeyRenamed = "passkey.renamed"

    /// Operators' actions: `admin.` and what was done (`admin.user.deleted`, `admin.client.created`, …).
    public static func admin(_ action: String) -> String { "admin." + action }

    /// The account column for an identifier.
    public static func account(of identifier: String) -> String { String(Secrets.sha256Hex(identifier).prefix(12)) }
}

/// What to read from the audit log: every filter optional, oldest first after `after`.
public struct AuditQuery: Sendable {
    public var userID: UUID?
    public var type: String?
    public var clientID: String?
    public var account: String?
    public var since: Date?
    /// The last event already seen: reading continues after it (`gatehouse audit --follow`).
    public var after: (at: Date, id: UUID)?
    public var limit: Int
    /// The newest `limit` events, newest first (the console's views), instead of oldest first.
    /// `after` is ignored then.
    public var newestFirst = false

    public init(
        userID: UUID? = nil, type: String? = nil, clientID: String? = nil, account: String? = nil, since: Date? = nil,
        after: (at: Date, id: UUID)? = nil, limit: Int = 100
    ) {
        self.userID = userID
        self.type = type
        self.clientID = clientID
        self.account = account
        self.since = since
        self.after = after
        self.limit = limit
    }
}

import Foundation

/// One sign-in on one device. Owns a chain of refresh tokens: since schema 18 the chain's state is
/// four columns of this row (``refreshChain``), so a session takes the same space after a thousand
/// refreshes as after one; a session on `refresh_tokens` rows (started beside an older node) moves
/// onto a chain at its next refresh.
public struct SessionRecord: Sendable, Hashable {
    public var id: UUID
    public var userID: UUID
    public var clientID: String
    /// How the user proved who they are: `pwd`, `otp`, `recovery`, …
    public var amr: [String]
    public var scopes: [String]
    public var userAgent: String?
    public var ipAddress: String?
    public var createdAt: Date
    public var lastUsedAt: Date
    /// Absolute expiry: no refresh extends a session past it.
    public var expiresAt: Date
    public var revokedAt: Date?
    public var revokeReason: String?
    /// The credential the session was started with; deleting a device authenticator ends its sessions.
    public var credentialID: String?
    /// The browser session (hosted sign-in) that signed this session in; RP-initiated logout ends both.
    public var browserSessionID: UUID?
    /// When the user last actively authenticated, when that was before the session began (single
    /// sign-on); `createdAt` otherwise. The ID token's `auth_time`.
    public var authTime: Date?
    /// Single claims the authorization request asked for (`claims` parameter): userinfo and every ID
    /// token of the session release them besides the scopes' claims.
    public var requestedClaims: RequestedClaims?
    /// The DPoP key (its RFC 7638 thumbprint) the session's refresh tokens are bound to (RFC 9449 §5):
    /// the key of the proof that started it, or of its first refresh with one. A public client's refresh
    /// needs a proof by this key; nil for a session that never saw a proof.
    public var dpopJKT: String?
    /// Where its refresh-token chain stands; nil for a session whose tokens are rows (started by a
    /// node of an older release, or while one was alive).
    public var refreshChain: RefreshChainState?

    public init(
        id: UUID = UUID(), userID: UUID, clientID: String, amr: [String], scopes: [String], userAgent: String?,
        ipAddress: String?, createdAt: Date, lastUsedAt: Date? = nil, expiresAt: Date, revokedAt: Date? = nil,
        revokeReason: String? = nil, credentialID: String? = nil, browserSessionID: UUID? = nil, authTime: Date? = nil,
        requestedClaims: RequestedClaims? = nil, dpopJKT: String? = nil, refreshChain: RefreshChainState? = nil
    ) {
        self.refreshChain = refreshChain
        self.requestedClaims = requestedClaims
        self.dpopJKT = dpopJKT
        self.id = id
        self.userID = userID
        self.clientID = clientID
        self.amr = amr
        self.scopes = scopes
        self.userAgent = userAgent
        self.ipAddress = ipAddress
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt ?? createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.revokeReason = revokeReason
        self.credentialID = credentialID
        self.browserSessionID = browserSessionID
        self.authTime = authTime
    }

    public func isLive(at now: Date) -> Bool { revokedAt == nil && expiresAt > now }
}

/// The state of a session's refresh-token chain. Token `n` of the chain is a MAC of the session id,
/// `n` and the chain's seed under the server secret (``RefreshChainToken``), so only the current
/// token's hash is stored, and any earlier token is recognised as one by its MAC: presented after the
/// grace interval, it ends the session.
public struct RefreshChainState: Sendable, Hashable {
    /// The generation of the one token that refreshes now.
    public var generation: Int
    /// When that token was issued (its predecessor rotated): what the grace interval counts from.
    public var rotatedAt: Date
    /// When that token idles out (the client's `refresh_token_ttl` after it was issued); the
    /// session's own expiry still bounds it.
    public var expiresAt: Date
    /// SHA-256 (hex) of that token: the current token is recognised by it whatever secrets the ring
    /// holds, so removing a previous secret after a rotation ends no session.
    public var tokenHash: String

    public init(generation: Int, rotatedAt: Date, expiresAt: Date, tokenHash: String) {
        self.generation = generation
        self.rotatedAt = rotatedAt
        self.expiresAt = expiresAt
        self.tokenHash = tokenHash
    }
}

/// Why a session ended, as recorded in `revoke_reason`.
public enum RevokeReason: String, Sendable {
    case logout
    case logoutOthers = "logout_others"
    case logoutGlobal = "logout_global"
    case userRevoked = "user_revoked"
    case refreshTokenReuse = "refresh_token_reuse"
    case passwordChanged = "password_changed"
    case tokenRevoked = "token_revoked"
    case clientDeleted = "client_deleted"
    /// The device authenticator the session was started with was deleted or used up its failures.
    case authenticatorRemoved = "authenticator_removed"
    /// The provider identity the session was started with was unlinked.
    case identityUnlinked = "identity_unlinked"
    /// An operator ended it (admin API or CLI: sign-out, disabling the account, one session).
    case adminRevoked = "admin_revoked"
    /// The browser session that signed it in ended (RP-initiated logout).
    case browserLogout = "browser_logout"
    /// An authorization code was presented a second time: the session it started is ended (RFC 6749 §4.1.2).
    case codeReplayed = "code_replayed"
    /// The user withdrew the client's consent.
    case consentRevoked = "consent_revoked"
}

/// One link of a session's refresh-token chain, stored by hash only.
public struct RefreshTokenRecord: Sendable, Hashable {
    /// SHA-256 (hex) of the token.
    public var tokenHash: String
    public var sessionID: UUID
    public var parentHash: String?
    public var createdAt: Date
    public var expiresAt: Date
    /// When the token was exchanged for its successor: that successor's creation, filled in by stores.
    public var rotatedAt: Date?

    public init(
        tokenHash: String, sessionID: UUID, parentHash: String?, createdAt: Date, expiresAt: Date,
        rotatedAt: Date? = nil
    ) {
        self.tokenHash = tokenHash
        self.sessionID = sessionID
        self.parentHash = parentHash
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.rotatedAt = rotatedAt
    }
}

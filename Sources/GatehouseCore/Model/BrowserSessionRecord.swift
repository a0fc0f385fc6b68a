import Foundation

/// A signed-in browser (single sign-on for the hosted pages), behind an HttpOnly cookie. The cookie
/// holds a random token; only its SHA-256 is stored.
public struct BrowserSessionRecord: Sendable, Hashable, Codable {
    public var id: UUID
    public var tokenHash: String
    public var userID: UUID
    /// How the user proved who they are when this browser signed in.
    public var amr: [String]
    /// When the user last actively authenticated (OIDC `auth_time`, `max_age`).
    public var authTime: Date
    public var userAgent: String?
    public var ipAddress: String?
    public var createdAt: Date
    public var lastSeenAt: Date
    public var expiresAt: Date
    public var revokedAt: Date?

    public init(
        id: UUID = UUID(), tokenHash: String, userID: UUID, amr: [String], authTime: Date, userAgent: String?,
        ipAddress: String?, createdAt: Date, lastSeenAt: Date? = nil, expiresAt: Date, revokedAt: Date? = nil
    ) {
        self.id = id
        self.tokenHash = tokenHash
        self.userID = userID
        self.amr = amr
        self.authTime = authTime
        self.userAgent = userAgent
        self.ipAddress = ipAddress
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt ?? createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }

    public func isLive(at now: Date) -> Bool { revokedAt == nil && expiresAt > now }
}

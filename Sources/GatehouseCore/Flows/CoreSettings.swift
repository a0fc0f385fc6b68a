import Foundation

/// Server-wide rules the flows follow (per-client rules live in ``ClientSettings``).
public struct CoreSettings: Sendable {
    /// The issuer (`iss`) and base of every link.
    public var publicURL: String
    /// How long a rotated refresh token still yields the same successor (network retries, parallel calls).
    public var refreshReuseGrace: TimeInterval = 10
    /// Absolute session lifetime: refreshes never extend a session past it.
    public var sessionLifetime: TimeInterval = 90 * 24 * 3600
    /// Upper bound on any client's `access_token_ttl`; retired keys stay published this long.
    public var maxAccessTokenTTL: Int = 24 * 3600
    public var passwordPolicy = PasswordPolicy()
    public var throttle = ThrottlePolicy()
    public var codeTTL: TimeInterval = 10 * 60
    public var verificationLinkTTL: TimeInterval = 24 * 3600
    public var codeMaxAttempts = 5
    /// How long a recovery link stays valid.
    public var recoveryLinkTTL: TimeInterval = 3600
    /// Minimum time between two verification or recovery mails to one address.
    public var sendCooldown: TimeInterval = 60
    /// One-time codes one identifier may be sent per hour.
    public var otpSendsPerHour = 10
    /// Identifier status look-ups per client IP per minute.
    public var identifierStatusPerMinute = 30
    /// How long a recovery session may set a new password without the old one.
    public var recoveryPasswordWindow: TimeInterval = 10 * 60

    public init(publicURL: String) {
        self.publicURL = publicURL
    }
}

/// What the transport knows about the caller that the rules care about.
public struct RequestMeta: Sendable, Hashable {
    public var ipAddress: String?
    public var userAgent: String?
    public var acceptLanguage: String?

    public init(ipAddress: String? = nil, userAgent: String? = nil, acceptLanguage: String? = nil) {
        self.ipAddress = ipAddress
        self.userAgent = userAgent.map { String($0.prefix(512)) }
        self.acceptLanguage = acceptLanguage
    }
}

import Foundation

/// Server-wide rules the flows follow (per-client rules live in ``ClientSettings``).
public struct CoreSettings: Sendable {
    /// The issuer (`iss`) and base of every link.
    public var publicURL: String
    /// How long a rotated refresh token still yields the same successor (network retries, parallel calls).
    public var refreshReuseGrace: TimeInterval = 10
    /// DPoP proofs must carry a server nonce (RFC 9449 §8), which limits a proof made ahead of time
    /// on a compromised device to the nonce's five to ten minutes.
    public var dpopNonces = false
    /// Absolute session lifetime: refreshes never extend a session past it.
    public var sessionLifetime: TimeInterval = 90 * 24 * 3600
    /// Upper bound on any client's `access_token_ttl`; retired keys stay published this long.
    public var maxAccessTokenTTL: Int = 24 * 3600
    public var passwordPolicy = PasswordPolicy()
    public var throttle = ThrottlePolicy()
    /// Whether text messages can be sent (a gateway, or the development outbox asked for by name);
    /// without it sign-ins by SMS code are refused rather than written where nobody reads them.
    public var smsAvailable = true
    public var codeTTL: TimeInterval = 10 * 60
    public var verificationLinkTTL: TimeInterval = 24 * 3600
    public var codeMaxAttempts = 5
    /// How long a recovery link stays valid.
    public var recoveryLinkTTL: TimeInterval = 3600
    /// Minimum time between two verification or recovery mails to one address.
    public var sendCooldown: TimeInterval = 60
    /// One-time codes one identifier may be sent per hour.
    public var otpSendsPerHour = 10
    /// Request-rate limits per client address block (and for SMS per country and in total).
    public var rateLimits = RateLimitPolicy()
    /// How long a signed-in browser stays signed in (hosted pages, single sign-on).
    public var browserSessionLifetime: TimeInterval = 14 * 24 * 3600
    /// How long audit events are kept.
    public var auditRetention: TimeInterval = 90 * 24 * 3600
    /// How long an anonymous account may go unused (no session refreshed, no sign-in) before
    /// housekeeping deletes it.
    public var anonymousIdleTTL: TimeInterval = 30 * 24 * 3600
    /// How long a persisted flow (a browser going through pages) may take.
    public var flowLifetime: TimeInterval = 30 * 60
    /// How long a recovery session may set a new password without the old one.
    public var recoveryPasswordWindow: TimeInterval = 10 * 60
    /// The relying party passkeys are scoped to, and the apps that share them.
    public var passkeys = PasskeySettings()

    public init(publicURL: String) {
        self.publicURL = publicURL
    }
}

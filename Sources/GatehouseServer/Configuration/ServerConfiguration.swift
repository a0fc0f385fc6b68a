import Argon2
import Foundation
import GatehouseCore
import GatehouseStore

/// Everything `gatehouse serve` can be told, with the defaults of the operating contract.
public struct ServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    public var publicURL = "http://127.0.0.1:8080"
    public var databaseURL = "sqlite://./gatehouse.sqlite"
    /// Lets a PostgreSQL URL to another machine use a mode weaker than `sslmode=verify-full` (a network
    /// the operator trusts, such as a private container network).
    public var allowInsecureDatabase = false
    public var secretFile = "./gatehouse.secret"
    public var smtpURL: String?
    public var mailFrom = "Gatehouse <no-reply@localhost>"
    public var smsURL: String?
    public var outboxDir = "./outbox"
    /// The hooks file: before-hooks over HTTP and webhook endpoints (`GATEHOUSE_HOOKS_FILE`).
    public var hooksFile: String?
    /// The social providers file: providers whose ID tokens sign users in (`GATEHOUSE_SOCIAL_FILE`).
    public var socialFile: String?
    /// Operator templates overriding the bundled ones, file by file.
    public var templatesDir: String?
    /// Whether this node drains the outbox in the background (tests drive it by hand).
    public var runOutboxDispatcher = true
    public var logLevel = "info"
    public var logFormat = "text"
    /// An OpenTelemetry collector's OTLP/HTTP base address (`GATEHOUSE_OTLP_ENDPOINT`, e.g.
    /// `http://collector:4318`): traces go to `<it>/v1/traces`. Nil: no tracing.
    public var otlpEndpoint: String?
    /// The `service.name` of exported traces (`OTEL_SERVICE_NAME`).
    public var serviceName = "gatehouse"
    /// Argon2id cost for new hashes (OWASP minimum by default).
    public var argon2 = Argon2Parameters.owaspDefault
    /// Hashing threads; defaults to the number of cores.
    public var hashingThreads = ProcessInfo.processInfo.activeProcessorCount
    /// Hash jobs allowed to wait beyond the running ones before logins get 503.
    public var hashingQueue = 64
    public var refreshReuseGrace: TimeInterval = 10
    /// DPoP proofs must carry the server's nonce (RFC 9449 §8).
    public var dpopNonces = false
    public var maxFailuresPerAccount = 10
    public var maxFailuresPerIP = 50
    /// The backstop: failed sign-ins per account from all addresses together.
    public var maxFailuresPerAccountTotal = 100
    public var failureWindow: TimeInterval = 15 * 60
    /// Request-rate limits (per address block; SMS also per country and in total).
    public var rateLimits = RateLimitPolicy()
    /// Shorthand for the `signup` limit's count (its window stays).
    public var maxSignupsPerIP: Int {
        get { rateLimits[.signup]?.limit ?? Int.max }
        set { rateLimits[.signup] = RateLimit(newValue, per: rateLimits[.signup]?.window ?? 15 * 60) }
    }
    /// One-time codes: lifetime, attempts; links: lifetimes; minimum time between two mails to one address.
    public var codeTTL: TimeInterval = 600
    public var codeAttempts = 5
    public var verificationLinkTTL: TimeInterval = 24 * 3600
    public var recoveryLinkTTL: TimeInterval = 3600
    public var sendCooldown: TimeInterval = 60
    public var otpSendsPerHour = 10
    /// Shorthand for the `identifier_status` limit: look-ups per address block per minute.
    public var identifierStatusPerMinute: Int {
        get { rateLimits[.identifierStatus]?.limit ?? Int.max }
        set { rateLimits[.identifierStatus] = RateLimit(newValue, per: 60) }
    }
    /// Trust `X-Forwarded-For` for the client address (only behind a proxy you control).
    public var trustForwardedFor = false
    /// Seconds a connection may send nothing before it is closed.
    public var idleTimeout: TimeInterval = 60
    /// How long one call to a sign-in provider or the password range service may take: a sign-in
    /// waits for it.
    public var providerTimeout: Duration = .seconds(5)
    /// How long one delivery over HTTP (a webhook, a back-channel logout notice, a text through the
    /// SMS gateway) may take before it counts as failed and is retried later.
    public var deliveryTimeout: Duration = .seconds(15)
    /// Bearer token that `/metrics` requires; without one it answers only loopback callers that came
    /// through no proxy.
    public var metricsToken: String?
    /// Seconds between two clean-ups of expired rows (codes, counters, flows, sessions, sent mail).
    public var cleanupInterval: TimeInterval = 600
    /// Days audit events are kept.
    public var auditRetentionDays = 90
    /// `GATEHOUSE_ANONYMOUS_IDLE_DAYS`: anonymous accounts unused this long are deleted.
    public var anonymousIdleDays = 30
    /// Lets this start change the issuer recorded for the database (every signed-in user must sign in
    /// again); without it a different issuer refuses to start on PostgreSQL.
    public var allowIssuerChange = false
    /// Write text messages to the development outbox when no SMS gateway is set (development only:
    /// codes land in files and the log). Without it, and without a gateway, SMS sign-in is refused.
    public var devOutbox = false
    /// A k-anonymity password range service (the Pwned Passwords API's shape, e.g.
    /// `https://api.pwnedpasswords.com/range/`) new passwords are checked against; nil: not asked.
    public var passwordRangeURL: String?
    /// The bot challenge widget and its siteverify endpoint, for clients whose `bot_challenge` asks for one.
    public var botChallenge: BotChallengeService?
    /// Passkeys: the RP ID and name, extra origins, native apps, attestation roots.
    public var passkeys = PasskeySettings()

    public init() {}

    var coreSettings: CoreSettings {
        var settings = CoreSettings(publicURL: publicURL)
        settings.refreshReuseGrace = refreshReuseGrace
        settings.dpopNonces = dpopNonces
        settings.passkeys = passkeys
        settings.codeTTL = codeTTL
        settings.codeMaxAttempts = codeAttempts
        settings.verificationLinkTTL = verificationLinkTTL
        settings.recoveryLinkTTL = recoveryLinkTTL
        settings.sendCooldown = sendCooldown
        settings.otpSendsPerHour = otpSendsPerHour
        settings.rateLimits = rateLimits
        settings.auditRetention = TimeInterval(auditRetentionDays) * 24 * 3600
        settings.anonymousIdleTTL = TimeInterval(anonymousIdleDays) * 24 * 3600
        settings.throttle = ThrottlePolicy(
            maxFailuresPerAccount: maxFailuresPerAccount, maxFailuresPerIP: maxFailuresPerIP,
            maxFailuresPerAccountTotal: maxFailuresPerAccountTotal, window: failureWindow)
        return settings
    }
}

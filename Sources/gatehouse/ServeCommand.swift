import ArgumentParser
import Argon2
import Foundation
import GatehouseCore
import GatehouseServer
import GatehouseStore
import Hummingbird
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Migrate if needed, then serve HTTP until SIGTERM or SIGINT.")

    @Option(help: "Address to listen on (GATEHOUSE_HOST; default 127.0.0.1)") var host: String?
    @Option(help: "Port to listen on (GATEHOUSE_PORT; default 8080)") var port: Int?
    @Option(
        name: .customLong("public-url"), help: "Issuer and base of every link in mail (GATEHOUSE_PUBLIC_URL; default http://127.0.0.1:8080)"
    )
    var publicURL: String?
    @OptionGroup var store: StoreOptions
    @Option(
        name: .customLong("smtp-url"), help: "smtp://[user:pass@]host:port or smtps://…; unset = development outbox (GATEHOUSE_SMTP_URL)")
    var smtpURL: String?
    @Option(name: .customLong("mail-from"), help: "Sender address (GATEHOUSE_MAIL_FROM; default 'Gatehouse <no-reply@localhost>')")
    var mailFrom: String?
    @Option(
        name: .customLong("sms-url"),
        help: "HTTP endpoint receiving {\"to\",\"body\"} JSON posts; unset = development outbox (GATEHOUSE_SMS_URL)")
    var smsURL: String?
    @Option(name: .customLong("outbox-dir"), help: "Where the development outbox writes messages (GATEHOUSE_OUTBOX_DIR; default ./outbox)")
    var outboxDir: String?
    @Option(
        name: .customLong("templates-dir"),
        help: "Directory of mail and page templates overriding the bundled ones, LANG/NAME.mustache (GATEHOUSE_TEMPLATES_DIR)")
    var templatesDir: String?
    @Option(
        name: .customLong("hooks-file"),
        help:
            "JSON file of before-hooks (HTTP endpoints asked at sign-up, login, recovery, verification, token issue and profile update) and signed webhooks; see docs/hooks.md (GATEHOUSE_HOOKS_FILE)"
    )
    var hooksFile: String?

    @Option(
        name: .customLong("social-file"),
        help:
            "JSON file of social providers (apple, google, facebook, github, linkedin, x, oidc, oauth2): their tokens and web sign-in; see the README (GATEHOUSE_SOCIAL_FILE)"
    )
    var socialFile: String?
    @Option(
        name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error, critical (GATEHOUSE_LOG_LEVEL; default info)")
    var logLevel: String?
    @Option(name: .customLong("log-format"), help: "text or json (GATEHOUSE_LOG_FORMAT; default text)")
    var logFormat: String?
    @Option(
        name: .customLong("otlp-endpoint"),
        help:
            "OpenTelemetry collector to send traces to over OTLP/HTTP, e.g. http://collector:4318 (GATEHOUSE_OTLP_ENDPOINT; service name from OTEL_SERVICE_NAME; default: no tracing)"
    )
    var otlpEndpoint: String?
    @OptionGroup var argon2: Argon2Options
    @Option(
        name: .customLong("hashing-threads"),
        help: "Threads that hash passwords, at nice +10 (GATEHOUSE_HASHING_THREADS; default: one per core)")
    var hashingThreads: Int?
    @Option(
        name: .customLong("hashing-queue"),
        help: "Password hashes allowed to wait before logins get 503 (GATEHOUSE_HASHING_QUEUE; default 64)")
    var hashingQueue: Int?
    @Option(
        name: .customLong("refresh-grace"),
        help: "Seconds a rotated refresh token still yields the same successor (GATEHOUSE_REFRESH_GRACE; default 10)")
    var refreshGrace: Double?
    @Option(
        name: .customLong("max-failures-per-account"),
        help: "Failed logins per account from one address block per window before 429 (GATEHOUSE_MAX_FAILURES_PER_ACCOUNT; default 10)")
    var maxFailuresPerAccount: Int?
    @Option(
        name: .customLong("max-failures-per-account-total"),
        help: "Failed logins per account from all addresses per window before 429 (GATEHOUSE_MAX_FAILURES_PER_ACCOUNT_TOTAL; default 100)")
    var maxFailuresPerAccountTotal: Int?
    @Option(
        name: .customLong("max-failures-per-ip"),
        help: "Failed logins per IP per window before 429 (GATEHOUSE_MAX_FAILURES_PER_IP; default 50)")
    var maxFailuresPerIP: Int?
    @Option(name: .customLong("failure-window"), help: "Seconds of the failed-login window (GATEHOUSE_FAILURE_WINDOW; default 900)")
    var failureWindow: Double?
    @Option(
        name: .customLong("max-signups-per-ip"), help: "Sign-ups per IP per window before 429 (GATEHOUSE_MAX_SIGNUPS_PER_IP; default 30)")
    var maxSignupsPerIP: Int?
    @Option(name: .customLong("code-ttl"), help: "Seconds a one-time code is valid (GATEHOUSE_CODE_TTL; default 600)")
    var codeTTL: Int?
    @Option(name: .customLong("code-attempts"), help: "Attempts per one-time code (GATEHOUSE_CODE_ATTEMPTS; default 5)")
    var codeAttempts: Int?
    @Option(
        name: .customLong("verification-link-ttl"),
        help: "Seconds a verification link is valid (GATEHOUSE_VERIFICATION_LINK_TTL; default 86400)")
    var verificationLinkTTL: Int?
    @Option(name: .customLong("recovery-link-ttl"), help: "Seconds a recovery link is valid (GATEHOUSE_RECOVERY_LINK_TTL; default 3600)")
    var recoveryLinkTTL: Int?
    @Option(
        name: .customLong("send-cooldown"),
        help: "Seconds between two verification or recovery mails to one address (GATEHOUSE_SEND_COOLDOWN; default 60)")
    var sendCooldown: Int?
    @Option(
        name: .customLong("otp-sends-per-hour"),
        help: "One-time codes one email or phone may be sent per hour (GATEHOUSE_OTP_SENDS_PER_HOUR; default 10)")
    var otpSendsPerHour: Int?
    @Option(
        name: .customLong("identifier-status-per-minute"),
        help: "Identifier status look-ups per IP per minute (GATEHOUSE_IDENTIFIER_STATUS_PER_MINUTE; default 30)")
    var identifierStatusPerMinute: Int?
    @Option(
        name: .customLong("rate-limits"),
        help: ArgumentHelp(
            "Request-rate limits as NAME=COUNT/SECONDS or NAME=off, comma-separated; * names all (GATEHOUSE_RATE_LIMITS). Per client address block unless named otherwise. Defaults: \(RateLimitPolicy().description)",
            valueName: "spec"))
    var rateLimits: String?
    @Option(
        name: .customLong("idle-timeout"),
        help: "Seconds a connection may send nothing before it is closed (GATEHOUSE_IDLE_TIMEOUT; default 60)")
    var idleTimeout: Int?
    @Option(
        name: .customLong("metrics-token"),
        help:
            "Bearer token /metrics requires (GATEHOUSE_METRICS_TOKEN); without one /metrics answers only loopback callers that came through no proxy"
    )
    var metricsToken: String?
    @Option(
        name: .customLong("cleanup-interval"),
        help:
            "Seconds between two clean-ups of expired codes, counters, flows, ended sessions and sent mail (GATEHOUSE_CLEANUP_INTERVAL; default 600; 0 turns it off)"
    )
    var cleanupInterval: Int?
    @Option(
        name: .customLong("audit-retention-days"),
        help: "Days the audit log keeps security events before the clean-up deletes them (GATEHOUSE_AUDIT_RETENTION_DAYS; default 90)")
    var auditRetentionDays: Int?
    @Option(
        name: .customLong("anonymous-idle-days"),
        help: "Days an anonymous account may go unused before the clean-up deletes it (GATEHOUSE_ANONYMOUS_IDLE_DAYS; default 30)")
    var anonymousIdleDays: Int?
    @Flag(
        name: .customLong("trust-forwarded-for"),
        help: "Take the client IP from X-Forwarded-For; only behind your own proxy (GATEHOUSE_TRUST_FORWARDED_FOR=1)")
    var trustForwardedFor = false
    @Flag(
        name: .customLong("allow-issuer-change"),
        help:
            "Record this node's public URL as the database's token issuer even though another one is recorded; every signed-in user must sign in again (GATEHOUSE_ALLOW_ISSUER_CHANGE=1)"
    )
    var allowIssuerChange = false
    @Flag(
        name: .customLong("dev-outbox"),
        help:
            "Development: write mail and text messages to the outbox directory (and their codes to the log) when GATEHOUSE_SMTP_URL / GATEHOUSE_SMS_URL are unset. Without it unsent mail waits in the outbox and SMS sign-in is refused (GATEHOUSE_DEV_OUTBOX=1)"
    )
    var devOutbox = false

    @Option(
        name: .customLong("password-range-url"),
        help:
            "A k-anonymity password range service new passwords are checked against, e.g. https://api.pwnedpasswords.com/range/ (only the first 5 hex digits of the password's SHA-1 are sent; when it does not answer, the password is let through with a warning) (GATEHOUSE_PASSWORD_RANGE_URL; default: not asked)"
    )
    var passwordRangeURL: String?

    @Flag(
        name: .customLong("dpop-nonces"),
        help: "DPoP proofs must carry a server nonce (RFC 9449 §8), handed out in DPoP-Nonce (env GATEHOUSE_DPOP_NONCES=1).")
    var dpopNonces = false

    func resolve() throws -> ServerConfiguration {
        var c = ServerConfiguration()
        c.host = Env.value(host, "GATEHOUSE_HOST") ?? c.host
        if let p = try int(port.map(String.init), "GATEHOUSE_PORT") { c.port = p }
        c.publicURL = Env.value(publicURL, "GATEHOUSE_PUBLIC_URL") ?? "http://\(c.host):\(c.port)"
        while c.publicURL.hasSuffix("/") { c.publicURL.removeLast() }
        c.databaseURL = store.resolvedDatabaseURL
        c.secretFile = store.resolvedSecretFile
        c.smtpURL = Env.value(smtpURL, "GATEHOUSE_SMTP_URL")
        c.mailFrom = Env.value(mailFrom, "GATEHOUSE_MAIL_FROM") ?? c.mailFrom
        c.smsURL = Env.value(smsURL, "GATEHOUSE_SMS_URL")
        c.outboxDir = Env.value(outboxDir, "GATEHOUSE_OUTBOX_DIR") ?? c.outboxDir
        c.templatesDir = Env.value(templatesDir, "GATEHOUSE_TEMPLATES_DIR")
        c.hooksFile = Env.value(hooksFile, "GATEHOUSE_HOOKS_FILE")
        c.socialFile = Env.value(socialFile, "GATEHOUSE_SOCIAL_FILE")
        c.logLevel = Env.value(logLevel, "GATEHOUSE_LOG_LEVEL") ?? c.logLevel
        c.logFormat = Env.value(logFormat, "GATEHOUSE_LOG_FORMAT") ?? c.logFormat
        if let endpoint = Env.value(otlpEndpoint, "GATEHOUSE_OTLP_ENDPOINT") {
            guard let url = URL(string: endpoint), ["http", "https"].contains(url.scheme ?? ""), url.host != nil, url.query == nil else {
                throw ValidationError("GATEHOUSE_OTLP_ENDPOINT must be an http(s) address such as http://collector:4318")
            }
            c.otlpEndpoint = endpoint
        }
        c.serviceName = Env.value(nil, "OTEL_SERVICE_NAME") ?? c.serviceName
        c.argon2 = try argon2.resolve(c.argon2)
        if let t = try int(hashingThreads.map(String.init), "GATEHOUSE_HASHING_THREADS") {
            guard t >= 1 else { throw ValidationError("GATEHOUSE_HASHING_THREADS must be at least 1") }
            c.hashingThreads = t
        }
        if let q = try int(hashingQueue.map(String.init), "GATEHOUSE_HASHING_QUEUE") { c.hashingQueue = q }
        if let g = Env.value(refreshGrace.map { String($0) }, "GATEHOUSE_REFRESH_GRACE") {
            guard let v = Double(g), v >= 0 else { throw ValidationError("GATEHOUSE_REFRESH_GRACE must be seconds") }
            c.refreshReuseGrace = v
        }
        if let v = try int(maxFailuresPerAccount.map(String.init), "GATEHOUSE_MAX_FAILURES_PER_ACCOUNT") { c.maxFailuresPerAccount = v }
        if let v = try int(maxFailuresPerIP.map(String.init), "GATEHOUSE_MAX_FAILURES_PER_IP") { c.maxFailuresPerIP = v }
        if let v = try int(maxFailuresPerAccountTotal.map(String.init), "GATEHOUSE_MAX_FAILURES_PER_ACCOUNT_TOTAL") {
            c.maxFailuresPerAccountTotal = v
        }
        if let v = try int(maxSignupsPerIP.map(String.init), "GATEHOUSE_MAX_SIGNUPS_PER_IP") { c.maxSignupsPerIP = v }
        if let v = try int(codeTTL.map(String.init), "GATEHOUSE_CODE_TTL") { c.codeTTL = TimeInterval(max(30, v)) }
        if let v = try int(codeAttempts.map(String.init), "GATEHOUSE_CODE_ATTEMPTS") { c.codeAttempts = max(1, v) }
        if let v = try int(verificationLinkTTL.map(String.init), "GATEHOUSE_VERIFICATION_LINK_TTL") {
            c.verificationLinkTTL = TimeInterval(max(60, v))
        }
        if let v = try int(recoveryLinkTTL.map(String.init), "GATEHOUSE_RECOVERY_LINK_TTL") { c.recoveryLinkTTL = TimeInterval(max(60, v)) }
        if let v = try int(sendCooldown.map(String.init), "GATEHOUSE_SEND_COOLDOWN") { c.sendCooldown = TimeInterval(v) }
        if let v = try int(otpSendsPerHour.map(String.init), "GATEHOUSE_OTP_SENDS_PER_HOUR") { c.otpSendsPerHour = max(1, v) }
        if let v = try int(identifierStatusPerMinute.map(String.init), "GATEHOUSE_IDENTIFIER_STATUS_PER_MINUTE") {
            c.identifierStatusPerMinute = max(1, v)
        }
        if let v = try int(idleTimeout.map(String.init), "GATEHOUSE_IDLE_TIMEOUT") { c.idleTimeout = TimeInterval(max(1, v)) }
        if let v = try int(cleanupInterval.map(String.init), "GATEHOUSE_CLEANUP_INTERVAL") { c.cleanupInterval = TimeInterval(v) }
        if let v = try int(auditRetentionDays.map(String.init), "GATEHOUSE_AUDIT_RETENTION_DAYS") { c.auditRetentionDays = max(1, v) }
        if let v = try int(anonymousIdleDays.map(String.init), "GATEHOUSE_ANONYMOUS_IDLE_DAYS") { c.anonymousIdleDays = max(1, v) }
        c.metricsToken = Env.value(metricsToken, "GATEHOUSE_METRICS_TOKEN").flatMap { $0.isEmpty ? nil : $0 }
        if let spec = Env.value(rateLimits, "GATEHOUSE_RATE_LIMITS") {
            do { try c.rateLimits.apply(spec) } catch { throw ValidationError("\(error)") }
        }
        if let w = Env.value(failureWindow.map { String($0) }, "GATEHOUSE_FAILURE_WINDOW") {
            guard let v = Double(w), v > 0 else { throw ValidationError("GATEHOUSE_FAILURE_WINDOW must be seconds") }
            c.failureWindow = v
        }
        c.trustForwardedFor = trustForwardedFor || ProcessInfo.processInfo.environment["GATEHOUSE_TRUST_FORWARDED_FOR"] == "1"
        c.allowIssuerChange = allowIssuerChange || ProcessInfo.processInfo.environment["GATEHOUSE_ALLOW_ISSUER_CHANGE"] == "1"
        c.allowInsecureDatabase = Env.flag("GATEHOUSE_DATABASE_INSECURE")
        c.devOutbox = devOutbox || ProcessInfo.processInfo.environment["GATEHOUSE_DEV_OUTBOX"] == "1"
        c.dpopNonces = dpopNonces || ProcessInfo.processInfo.environment["GATEHOUSE_DPOP_NONCES"] == "1"
        if let range = Env.value(passwordRangeURL, "GATEHOUSE_PASSWORD_RANGE_URL") {
            guard let url = URL(string: range), let host = url.host, url.query == nil,
                url.scheme == "https" || (url.scheme == "http" && Loopback.contains(host))
            else {
                throw ValidationError(
                    "GATEHOUSE_PASSWORD_RANGE_URL must be an https address ending where the prefix goes, such as https://api.pwnedpasswords.com/range/"
                )
            }
            c.passwordRangeURL = range
        }
        c.passkeys = try PasskeyEnvironment.settings(publicURL: c.publicURL)
        c.botChallenge = try BotChallengeEnvironment.service()
        guard ["text", "json"].contains(c.logFormat) else { throw ValidationError("log format must be text or json") }
        guard Logger.Level(rawValue: c.logLevel) != nil else { throw ValidationError("unknown log level \(c.logLevel)") }
        return c
    }

    private func int(_ flag: String?, _ variable: String) throws -> Int? {
        guard let raw = Env.value(flag, variable) else { return nil }
        guard let value = Int(raw), value >= 0 else { throw ValidationError("\(variable) must be a whole number") }
        return value
    }

    func run() async throws {
        let configuration = try resolve()
        AllocatorPolicy.apply()
        let level = Logger.Level(rawValue: configuration.logLevel) ?? .info
        let json = configuration.logFormat == "json"
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = json ? JSONLogHandler(label: label) : TextLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "gatehouse")
        let server = try await GatehouseServer.start(configuration, logger: logger)
        if let client = server.createdDefaultClient {
            // Straight to the file handle: `print` may sit in a buffer while the server runs.
            FileHandle.standardOutput.write(Data("Created the default public client: \(client.id)\n".utf8))
        }
        logger.info(
            "Gatehouse listening",
            metadata: [
                "address": "\(configuration.host):\(configuration.port)",
                "database":
                    "\((try? DatabaseURL(configuration.databaseURL, allowPlaintextToRemote: configuration.allowInsecureDatabase))?.description ?? "?")",
            ])
        let app = server.makeApplication()
        do {
            try await app.runService()
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }
}

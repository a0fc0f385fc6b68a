import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseStore
import Hummingbird
import Logging
import ServiceLifecycle

/// A started Gatehouse: the database open, keys loaded, the default client in place. The same value
/// builds the HTTP application for `serve` and for tests.
public struct GatehouseServer: Sendable {
    public let configuration: ServerConfiguration
    public let services: CoreServices
    public let persistence: SQLPersistence
    public let keys: SigningKeys
    public let hashingPool: HashingPool
    /// Set when this start created the default client (first start on an empty database).
    public let createdDefaultClient: ClientRecord?
    public let templates: TemplateCatalog
    let consoleTemplates: ConsoleTemplates
    /// The outbox drain; the background service calls it, tests may too.
    public let delivery: OutboxDelivery
    let metrics: MetricsRegistry
    /// Set when traces are exported (`GATEHOUSE_OTLP_ENDPOINT`): runs beside the HTTP server.
    let traceExporter: OTLPExporter?

    public static func start(
        _ configuration: ServerConfiguration, clock: any WallClock = SystemWallClock(), logger: Logger,
        transports: [OutboxMessage.Channel: any MessageTransport]? = nil, hooks: FlowHooks = FlowHooks(),
        assurance: (any AssurancePolicy)? = nil, factors: [any SecondFactor]? = nil
    ) async throws -> GatehouseServer {
        let templates = try TemplateCatalog(overrideDirectory: configuration.templatesDir)
        let consoleTemplates = try ConsoleTemplates()
        let hooksFile = try configuration.hooksFile.map { try HooksConfiguration.load(path: $0) }
        let socialProviders = try configuration.socialFile.map { try SocialProvidersFile.load(path: $0) } ?? []
        let ring = try ServerSecret.loadOrCreate(path: configuration.secretFile)
        let exporter = configuration.otlpEndpoint.map {
            OTLPTracing.exporter(endpoint: $0, serviceName: configuration.serviceName, logger: logger)
        }
        let persistence = try await SQLPersistence.open(
            try DatabaseURL(configuration.databaseURL, allowPlaintextToRemote: configuration.allowInsecureDatabase), logger: logger)
        do {
            try await checkIssuer(configuration, persistence: persistence, clock: clock, logger: logger)
            let secret = try await persistence.adoptStableKeys(ring, now: clock.now())
            if secret.fingerprints.count > 1 {
                logger.notice(
                    "the server secret ring holds previous secrets; once `gatehouse secret status` shows nothing sealed under them, remove them",
                    metadata: [
                        "current": "\(secret.fingerprints[0])", "previous": "\(secret.fingerprints.dropFirst().joined(separator: ","))",
                    ])
            }
            let pool = HashingPool(threads: configuration.hashingThreads, maxQueued: configuration.hashingQueue)
            let hasher = try PasswordHasher(parameters: configuration.argon2, pool: pool)
            let keys = SigningKeys(persistence: persistence, secret: secret, clock: clock)
            try await keys.load()
            let tokens = AccessTokens(
                keys: keys, issuer: configuration.publicURL, clock: clock, subjects: SubjectIdentifiers(secret: secret))
            // Known before the first request: beside a node of an older release, no session starts on a chain.
            let chains = RefreshChainGate(open: try await persistence.refreshChainsAllowed(now: Date()))
            var settings = configuration.coreSettings
            settings.smsAvailable = transports?[.sms] != nil || configuration.smsURL != nil || configuration.devOutbox
            let services = CoreServices(
                persistence: persistence, hasher: hasher, tokens: tokens, secret: secret, clock: clock,
                settings: settings, logger: logger, hooks: Self.hooks(hooks, file: hooksFile, logger: logger),
                social: SocialFederation(providers: socialProviders, fetcher: HTTPFederationClient(timeout: configuration.providerTimeout)),
                // The second factors every server offers, unless a test brings its own.
                assurance: assurance ?? FactorPolicy(smsAvailable: settings.smsAvailable),
                factors: factors
                    ?? SecondFactors.standard(
                        secret: secret, clock: clock, relyingParty: settings.passkeys.relyingParty(publicURL: settings.publicURL)),
                refreshChains: chains, commonPasswords: try BundledPasswordList.load(),
                passwordRange: configuration.passwordRangeURL.map {
                    PasswordRangeService(baseURL: $0, http: HTTPFederationClient(timeout: configuration.providerTimeout), logger: logger)
                }, botChallengeService: configuration.botChallenge)
            var transports = try transports ?? Self.transports(configuration, logger: logger)
            if let webhooks = hooksFile?.webhooks, !webhooks.isEmpty, transports[.webhook] == nil {
                transports[.webhook] = WebhookTransport(webhooks: webhooks, timeout: configuration.deliveryTimeout)
            }
            if transports[.logout] == nil {
                transports[.logout] = BackChannelLogoutTransport(tokens: tokens, clock: clock, timeout: configuration.deliveryTimeout)
            }
            let created = try await ClientAdmin(persistence: persistence, clock: clock).ensureDefault()
            let delivery = OutboxDelivery(
                services: services, renderer: templates, transports: transports)
            return GatehouseServer(
                configuration: configuration, services: services, persistence: persistence, keys: keys,
                hashingPool: pool, createdDefaultClient: created, templates: templates, consoleTemplates: consoleTemplates,
                delivery: delivery,
                metrics: MetricsRegistry.shared, traceExporter: exporter)
        } catch {
            await persistence.shutdown()
            throw error
        }
    }

    /// Every node of one database must issue tokens under one name, or each refuses the others'
    /// tokens. On PostgreSQL (several nodes) a different issuer refuses to start; on SQLite (one node)
    /// a changed public URL is taken with a warning.
    static func checkIssuer(
        _ configuration: ServerConfiguration, persistence: SQLPersistence, clock: any WallClock, logger: Logger
    ) async throws {
        let shared = persistence.dialect == .postgres
        switch try await persistence.claimIssuer(
            configuration.publicURL, now: clock.now(), allowChange: configuration.allowIssuerChange || !shared)
        {
        case .recorded:
            if shared, configuration.publicURL.hasPrefix("http://127.0.0.1") || configuration.publicURL.hasPrefix("http://localhost") {
                logger.warning(
                    "the token issuer is a loopback address; set GATEHOUSE_PUBLIC_URL to the address clients use before adding nodes",
                    metadata: ["issuer": "\(configuration.publicURL)"])
            }
        case .matched:
            break
        case .changed(let from):
            logger.warning(
                "the token issuer changed; tokens issued before no longer verify",
                metadata: ["from": "\(from)", "to": "\(configuration.publicURL)"])
        }
    }

    /// The hooks given in code, then the hooks file's HTTP hooks; its webhooks, unless given in code.
    static func hooks(_ given: FlowHooks, file: HooksConfiguration?, logger: Logger) -> FlowHooks {
        guard let file else { return given }
        let http: [any FlowHook] = file.hooks.map { HTTPFlowHook(hook: $0, allowedClaims: file.allowedClaims, logger: logger) }
        let webhooks = file.webhooks.isEmpty ? nil : WebhookOutbox(subscriptions: file.webhooks.map(\.subscription))
        return FlowHooks(given.hooks + http, webhooks: given.webhooks ?? webhooks)
    }

    /// SMTP and the SMS gateway when configured; the development outbox only when asked for
    /// (`--dev-outbox`). Without either, mail waits in the outbox (nothing is lost, nothing is sent)
    /// and sign-in by SMS is refused.
    public static func transports(
        _ configuration: ServerConfiguration, logger: Logger
    ) throws
        -> [OutboxMessage.Channel: any MessageTransport]
    {
        let development = DevelopmentOutbox(directory: configuration.outboxDir, from: configuration.mailFrom, logger: logger)
        if configuration.smtpURL == nil {
            if configuration.devOutbox {
                logger.warning(
                    "NO MAIL SERVER: mail is written to the development outbox and its codes logged (--dev-outbox); set GATEHOUSE_SMTP_URL in production",
                    metadata: ["outbox": "\(configuration.outboxDir)"])
            } else {
                logger.error(
                    "NO MAIL SERVER: mail (verification, recovery, codes) waits in the outbox and is NOT SENT until GATEHOUSE_SMTP_URL is set; --dev-outbox writes it to files for development"
                )
            }
        }
        if configuration.smsURL == nil {
            if configuration.devOutbox {
                logger.warning("NO SMS GATEWAY: text messages go to the development outbox (--dev-outbox)")
            } else {
                logger.warning(
                    "NO SMS GATEWAY: sign-in by SMS code is refused until GATEHOUSE_SMS_URL is set (or --dev-outbox in development)")
            }
        }
        var transports: [OutboxMessage.Channel: any MessageTransport] =
            configuration.devOutbox ? [.email: development, .sms: development] : [:]
        if let smtp = configuration.smtpURL {
            transports[.email] = try SMTPMailTransport(url: smtp, from: configuration.mailFrom, logger: logger)
        }
        if let sms = configuration.smsURL {
            transports[.sms] = try SMSGatewayTransport(url: sms, timeout: configuration.deliveryTimeout)
        }
        return transports
    }

    public func shutdown() async {
        await hashingPool.shutdown()
        await persistence.shutdown()
    }
}

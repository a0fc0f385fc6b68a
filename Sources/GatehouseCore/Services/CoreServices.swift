import Foundation
import Logging

/// The dependencies of the flows, passed in `init` rather than found through a locator, and the
/// components every flow shares, built once here from only what each needs.
public struct CoreServices: Sendable {
    public let persistence: any Persistence
    public let hasher: PasswordHasher
    public let tokens: AccessTokens
    public let secret: ServerSecret
    public let clock: any WallClock
    public let settings: CoreSettings
    public let logger: Logger
    /// Shared by every copy of these services: one cache per server.
    public let clientCache: ClientCache
    /// The before/after hook points every flow passes through.
    public let hooks: FlowHooks

    public let clients: ClientResolver
    /// Web origins registered with some client, for CORS.
    public let allowedOrigins: AllowedOrigins
    public let issuer: SessionIssuer
    public let browserSessions: BrowserSessions
    /// Back-channel logout: what ending sessions tells their clients.
    public let notices: LogoutNotices
    public let password: PasswordStrategy
    /// The rules a new password meets: length, personal data, the common list, the range service.
    public let passwordScreen: PasswordScreen
    /// The bot challenge clients may ask for before sign-up, password sign-in and code sends.
    public let botChallenge: BotChallenge
    public let throttle: LoginThrottle
    public let rateLimits: RateLimiter
    /// The operator's social providers and the verifier of their tokens.
    public let social: SocialFederation
    /// Clients' request-object keys, registered or fetched from their `jwks_uri`.
    public let clientKeys: ClientKeySets
    /// The one place sessions start, behind the assurance gate.
    public let starter: SessionStarter
    /// One-time codes and link tokens: issued, redeemed and peeked at by every flow that mails or texts one.
    public let codes: OneTimeCodes
    /// The second factors a waiting sign-in may be completed with, by id.
    public let factors: [String: any SecondFactor]
    /// DPoP proofs (RFC 9449) checked against their request, once across every node.
    public let dpop: DPoPVerifier
    /// Who Gatehouse is to passkey authenticators (RP ID, origins, attestation roots).
    public let relyingParty: RelyingParty
    /// Whether sessions start on a refresh chain; the node heartbeat closes it while an older node lives.
    public let refreshChains: RefreshChainGate

    public init(
        persistence: any Persistence, hasher: PasswordHasher, tokens: AccessTokens, secret: ServerSecret,
        clock: any WallClock, settings: CoreSettings, logger: Logger, hooks: FlowHooks = FlowHooks(),
        social: SocialFederation = SocialFederation(), assurance: any AssurancePolicy = FirstFactorSuffices(),
        factors: [any SecondFactor] = [], refreshChains: RefreshChainGate = RefreshChainGate(),
        commonPasswords: CommonPasswords = .none, passwordRange: PasswordRangeService? = nil,
        botChallengeService: BotChallengeService? = nil
    ) {
        self.refreshChains = refreshChains
        self.social = social
        self.clientKeys = ClientKeySets(fetcher: social.http)
        self.persistence = persistence
        self.hasher = hasher
        self.tokens = tokens
        self.secret = secret
        self.clock = clock
        self.settings = settings
        self.relyingParty = settings.passkeys.relyingParty(publicURL: settings.publicURL)
        self.logger = logger
        self.hooks = hooks
        let cache = ClientCache()
        self.clientCache = cache
        self.clients = ClientResolver(persistence: persistence, cache: cache)
        self.allowedOrigins = AllowedOrigins(persistence: persistence, clock: clock)
        self.issuer = SessionIssuer(
            persistence: persistence, tokens: tokens, clock: clock, settings: settings, secret: secret, chains: refreshChains,
            hooks: hooks)
        self.notices = LogoutNotices(secret: secret)
        self.browserSessions = BrowserSessions(
            persistence: persistence, clock: clock, lifetime: settings.browserSessionLifetime, notices: notices)
        self.password = PasswordStrategy(hasher: hasher, policy: settings.passwordPolicy)
        self.passwordScreen = PasswordScreen(policy: settings.passwordPolicy, common: commonPasswords, range: passwordRange)
        self.botChallenge = BotChallenge(
            service: botChallengeService, http: social.http, persistence: persistence, clock: clock, logger: logger)
        self.throttle = LoginThrottle(policy: settings.throttle)
        self.rateLimits = RateLimiter(policy: settings.rateLimits)
        self.starter = SessionStarter(
            issuer: issuer, browserSessions: browserSessions, clock: clock, policy: assurance, flowLifetime: settings.flowLifetime)
        self.codes = OneTimeCodes(
            persistence: persistence, secret: secret, clock: clock, maxAttempts: settings.codeMaxAttempts, lifetime: settings.codeTTL)
        self.dpop = DPoPVerifier(
            persistence: persistence, secret: secret, clock: clock, publicURL: settings.publicURL, requireNonce: settings.dpopNonces)
        self.factors = Dictionary(factors.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
    }
}

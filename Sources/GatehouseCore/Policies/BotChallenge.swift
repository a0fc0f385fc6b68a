import Foundation
import GatehouseAPI
import Logging

/// The server's bot challenge service: a widget the hosted pages and the apps show (Cloudflare
/// Turnstile, hCaptcha or Google reCAPTCHA), and the siteverify endpoint its tokens are checked at.
/// All three take the same form post (`secret`, `response`, `remoteip`) and answer
/// `{"success": true|false, …}`.
public struct BotChallengeService: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case turnstile, hcaptcha, recaptcha

        /// The provider's own siteverify endpoint.
        public var verifyURL: String {
            switch self {
            case .turnstile: "https://challenges.cloudflare.com/turnstile/v0/siteverify"
            case .hcaptcha: "https://api.hcaptcha.com/siteverify"
            case .recaptcha: "https://www.google.com/recaptcha/api/siteverify"
            }
        }
    }

    public var kind: Kind
    /// Public: the widget shows it.
    public var siteKey: String
    /// Private: sent only to `verifyURL`, never logged, never stored in the database.
    public var secret: String
    public var verifyURL: String

    public init(kind: Kind, siteKey: String, secret: String, verifyURL: String? = nil) {
        self.kind = kind
        self.siteKey = siteKey
        self.secret = secret
        self.verifyURL = verifyURL ?? kind.verifyURL
    }
}

/// Whatever describes or reflects the service (a log line, `dump`, a debugger) sees no secret.
extension BotChallengeService: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "BotChallengeService(\(kind.rawValue), site key \(siteKey), \(verifyURL))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["kind": kind, "siteKey": siteKey, "verifyURL": verifyURL])
    }
}

/// Checks the bot challenge a client asks for before sign-up, password sign-in and code sends (its
/// `bot_challenge` setting). A token is used once: its hash is claimed in the database (every node
/// shares it) before the service is asked, so a replay is refused even while the service would still
/// accept the token.
public struct BotChallenge: Sendable {
    public enum Action: String, Sendable, CaseIterable {
        case signup, signin
        case codeSend = "code_send"
    }

    public let service: BotChallengeService?
    let http: (any FederationHTTP)?
    let persistence: any Persistence
    let clock: any WallClock
    let logger: Logger

    /// Longer than any of the three services keeps a token valid (five minutes for Turnstile,
    /// two for reCAPTCHA).
    static let replayWindow: TimeInterval = 15 * 60

    public init(
        service: BotChallengeService?, http: (any FederationHTTP)?, persistence: any Persistence, clock: any WallClock, logger: Logger
    ) {
        self.service = service
        self.http = http
        self.persistence = persistence
        self.clock = clock
        self.logger = logger
    }

    /// Whether `client` asks for a challenge before `action`.
    public static func asked(_ action: Action, by client: ClientRecord) -> Bool {
        client.settings.botChallenge.contains(action.rawValue)
    }

    /// Returns when the client does not ask for a challenge before `action`, or the request's token
    /// passes; throws `bot_challenge_required` (400), `bot_challenge_failed` (403), or 503 when the
    /// service cannot be asked (failing closed: a challenge that lets everything through while its
    /// service is down protects nothing).
    public func require(_ action: Action, client: ClientRecord, meta: RequestMeta) async throws {
        guard Self.asked(action, by: client) else { return }
        guard let service, let http else {
            logger.error(
                "a client asks for a bot challenge but the server has none set (GATEHOUSE_BOT_CHALLENGE)",
                metadata: ["client": "\(client.id)", "action": "\(action.rawValue)"])
            throw GatehouseError.botChallengeUnavailable
        }
        guard let token = meta.botChallengeToken, !token.isEmpty else { throw GatehouseError.botChallengeRequired }
        // The services' tokens are about 2 KiB at most; a longer one is not one of theirs.
        guard token.utf8.count <= 4096 else { throw GatehouseError.botChallengeFailed }
        let now = clock.now()
        let key = "bot:" + Secrets.sha256Hex(token)
        let fresh = try await persistence.transaction {
            try await $0.proofs.claim(key: key, until: now.addingTimeInterval(Self.replayWindow))
        }
        guard fresh else { throw GatehouseError.botChallengeFailed }
        var fields = [("secret", service.secret), ("response", token)]
        if let ip = meta.ipAddress { fields.append(("remoteip", ip)) }
        let answer: (status: Int, body: Data)
        do {
            answer = try await http.send(.form(service.verifyURL, fields))
        } catch {
            logger.warning("the bot challenge service did not answer", metadata: ["service": "\(service.verifyURL)", "error": "\(error)"])
            throw GatehouseError.botChallengeUnavailable
        }
        guard (200..<300).contains(answer.status),
            let verdict = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any], let success = verdict["success"] as? Bool
        else {
            logger.warning(
                "the bot challenge service answered something else than a verdict",
                metadata: ["service": "\(service.verifyURL)", "status": "\(answer.status)"])
            throw GatehouseError.botChallengeUnavailable
        }
        guard success else { throw GatehouseError.botChallengeFailed }
    }
}

import Foundation
import GatehouseCore
import GatehouseSMTP

/// The operator's hooks file (`GATEHOUSE_HOOKS_FILE`, JSON): before-hooks called over HTTP, webhook
/// endpoints, the claims hooks may add and the hosts they may live on. Checked whole at start-up, so a
/// typo stops the server instead of silently letting every sign-up through.
public struct HooksConfiguration: Sendable {
    public struct Hook: Sendable {
        public var url: String
        /// nil: every before-point.
        public var points: Set<HookPoint>?
        /// nil: every client.
        public var clients: Set<String>?
        public var timeout: Duration
        /// When the hook fails (timeout, refused connection, non-2xx, bad answer): refuse the request
        /// (`deny`, the default) or carry on as if it had allowed (`allow`).
        public var failOpen: Bool
        public var secrets: [WebhookSecret]
    }

    public struct Webhook: Sendable {
        public var subscription: WebhookSubscription
        public var secrets: [WebhookSecret]
    }

    public var hooks: [Hook] = []
    public var webhooks: [Webhook] = []
    /// Access-token claims a token-issue hook may add; anything else makes its answer a failure.
    public var allowedClaims: Set<String> = []

    public init() {}

    /// The longest a before-hook may be given: a sign-in waits for it.
    public static let maxTimeout: Duration = .seconds(10)

    public static func load(
        path: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws
        -> HooksConfiguration
    {
        guard let data = FileManager.default.contents(atPath: path) else { throw HooksConfigurationError("cannot read \(path)") }
        let file: File
        do {
            try Self.refuseUnknownKeys(data)
            file = try JSONDecoder().decode(File.self, from: data)
        } catch let error as HooksConfigurationError {
            throw HooksConfigurationError("\(path): \(error.description)")
        } catch {
            throw HooksConfigurationError("\(path) is not a valid hooks file: \(Self.describe(error))")
        }
        return try HooksConfiguration(file, environment: environment)
    }

    init(_ file: File, environment: [String: String]) throws {
        let allowedHosts = file.allowedHosts.map { Set($0.map { $0.lowercased() }) }
        func check(_ raw: String, what: String) throws -> String {
            guard let components = URLComponents(string: raw), let scheme = components.scheme?.lowercased(),
                ["http", "https"].contains(scheme), let host = components.host?.lowercased(), !host.isEmpty,
                components.user == nil, components.password == nil
            else { throw HooksConfigurationError("\(what) \(raw) is not an http(s) URL without credentials") }
            let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            // Hook calls carry addresses and profiles: in clear text only to this machine.
            guard scheme == "https" || SMTPConfiguration.isLoopback(bare) else {
                throw HooksConfigurationError("\(what) \(raw) must be https:// (http:// only to localhost)")
            }
            if let allowedHosts, !allowedHosts.contains(bare) {
                throw HooksConfigurationError("\(what) \(raw): \(bare) is not in allowed_hosts")
            }
            return raw
        }
        func secrets(_ raw: [String]?, what: String) throws -> [WebhookSecret] {
            try (raw ?? []).map { text in
                var value = text
                if text.hasPrefix("env:") {
                    let name = String(text.dropFirst(4))
                    guard let found = environment[name], !found.isEmpty else {
                        throw HooksConfigurationError("\(what): the environment variable \(name) is not set")
                    }
                    value = found
                }
                do { return try WebhookSecret(value) } catch { throw HooksConfigurationError("\(what): \(error)") }
            }
        }
        for hook in file.hooks ?? [] {
            let url = try check(hook.url, what: "hook")
            let millis = hook.timeoutMs ?? 2000
            guard millis >= 1, .milliseconds(millis) <= Self.maxTimeout else {
                throw HooksConfigurationError("hook \(url): timeout_ms must be 1…10000")
            }
            let points = try hook.points.map { names in
                try Set(
                    names.map { name in
                        guard let point = HookPoint(rawValue: name), HookPoint.beforePoints.contains(point) else {
                            throw HooksConfigurationError(
                                "hook \(url): unknown point \(name); use \(HookPoint.beforePoints.map(\.rawValue).joined(separator: ", "))")
                        }
                        return point
                    })
            }
            let policy = hook.onFailure ?? "deny"
            guard ["deny", "allow"].contains(policy) else { throw HooksConfigurationError("hook \(url): on_failure must be deny or allow") }
            hooks.append(
                Hook(
                    url: url, points: points, clients: hook.clients.map(Set.init), timeout: .milliseconds(millis),
                    failOpen: policy == "allow", secrets: try secrets(hook.secrets ?? hook.secret.map { [$0] }, what: "hook \(url)")))
        }
        var seen: Set<String> = []
        for webhook in file.webhooks ?? [] {
            let url = try check(webhook.url, what: "webhook")
            guard seen.insert(url).inserted else { throw HooksConfigurationError("webhook \(url) is listed twice") }
            if let events = webhook.events, let unknown = events.first(where: { !HookPoint.webhookTypes.contains($0) }) {
                throw HooksConfigurationError(
                    "webhook \(url): unknown event \(unknown); use \(HookPoint.webhookTypes.joined(separator: ", "))")
            }
            let keys = try secrets(webhook.secrets, what: "webhook \(url)")
            guard !keys.isEmpty, keys.count <= 2 else {
                throw HooksConfigurationError("webhook \(url) needs one secret, or two while moving to a new one")
            }
            webhooks.append(
                Webhook(
                    subscription: WebhookSubscription(
                        url: url, events: webhook.events.map(Set.init), clients: webhook.clients.map(Set.init)),
                    secrets: keys))
        }
        let claims = Set(file.allowedClaims ?? [])
        if let reserved = claims.first(where: { AccessTokenClaims.reservedNames.contains($0) }) {
            throw HooksConfigurationError("allowed_claims: \(reserved) is a registered claim that only Gatehouse sets")
        }
        allowedClaims = claims
    }

    /// A misspelt key would otherwise be ignored, and a hook meant to fail closed would fail open.
    private static func refuseUnknownKeys(_ data: Data) throws {
        guard let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return }
        func check(_ object: [String: Any], allowed: Set<String>, what: String) throws {
            if let unknown = object.keys.sorted().first(where: { !allowed.contains($0) }) {
                throw HooksConfigurationError("unknown key \(unknown) in \(what)")
            }
        }
        try check(top, allowed: ["hooks", "webhooks", "allowed_claims", "allowed_hosts"], what: "the file")
        for hook in top["hooks"] as? [[String: Any]] ?? [] {
            try check(hook, allowed: ["url", "points", "clients", "timeout_ms", "on_failure", "secret", "secrets"], what: "a hook")
        }
        for webhook in top["webhooks"] as? [[String: Any]] ?? [] {
            try check(webhook, allowed: ["url", "events", "clients", "secrets"], what: "a webhook")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            "missing \((context.codingPath + [key]).map(\.stringValue).joined(separator: "."))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "wrong type at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty ? "not JSON" : "bad value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "\(type(of: error))"
        }
    }

    struct File: Decodable {
        struct Hook: Decodable {
            var url: String
            var points: [String]?
            var clients: [String]?
            var timeoutMs: Int?
            var onFailure: String?
            var secret: String?
            var secrets: [String]?
            enum CodingKeys: String, CodingKey {
                case url, points, clients, secret, secrets
                case timeoutMs = "timeout_ms"
                case onFailure = "on_failure"
            }
        }
        struct Webhook: Decodable {
            var url: String
            var events: [String]?
            var clients: [String]?
            var secrets: [String]
        }
        var hooks: [Hook]?
        var webhooks: [Webhook]?
        var allowedClaims: [String]?
        var allowedHosts: [String]?
        enum CodingKeys: String, CodingKey {
            case hooks, webhooks
            case allowedClaims = "allowed_claims"
            case allowedHosts = "allowed_hosts"
        }
    }
}

public struct HooksConfigurationError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import GatehouseAPI
import GatehouseCore
import Logging

/// `gatehouse hooks test`: sends a sample event to each hook configured for a point, and says what
/// each answered, as the server would take it (after its failure policy).
public enum HookTester {
    public struct Outcome: Sendable {
        public var url: String
        public var verdict: String
    }

    public static func run(
        _ file: HooksConfiguration, point: HookPoint, clientID: String, identifier: String, logger: Logger
    ) async
        -> [Outcome]
    {
        let event = HookEvent(
            point: point, clientID: clientID, method: "password", identifier: identifier, userID: point == .signup ? nil : UUID(),
            profile: [.signup, .profileUpdate].contains(point) ? Profile(name: "Sample User") : nil,
            scopes: point == .tokenIssue ? ["openid", "profile"] : nil,
            meta: RequestMeta(ipAddress: "127.0.0.1", userAgent: "gatehouse hooks test"))
        var outcomes: [Outcome] = []
        for hook in file.hooks where hook.points?.contains(point) ?? HookPoint.defaultPoints.contains(point) {
            guard hook.clients?.contains(clientID) ?? true else {
                outcomes.append(Outcome(url: hook.url, verdict: "not asked: the hook is for other clients"))
                continue
            }
            let http = HTTPFlowHook(hook: hook, allowedClaims: file.allowedClaims, logger: logger)
            let verdict: String
            do {
                switch try await http.before(event) {
                case .allow: verdict = "allow"
                case .change(let changes): verdict = "allow with changes: " + describe(changes)
                case .deny(let result):
                    verdict = "deny: " + result.errors.map { ($0.field.map { "\($0): " } ?? "") + $0.message }.joined(separator: "; ")
                }
            } catch {
                verdict = "failed, so the request is refused (on_failure deny): hook_failed"
            }
            outcomes.append(Outcome(url: hook.url, verdict: verdict))
        }
        return outcomes
    }

    private static func describe(_ changes: HookChanges) -> String {
        var parts: [String] = []
        if changes.profile != nil { parts.append("profile") }
        if let metadata = changes.appMetadata { parts.append("app_metadata(\(metadata.keys.sorted().joined(separator: ",")))") }
        if !changes.claims.isEmpty { parts.append("claims(\(changes.claims.keys.sorted().joined(separator: ",")))") }
        return parts.joined(separator: ", ")
    }
}

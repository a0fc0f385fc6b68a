import AsyncHTTPClient
import Foundation
import GatehouseAPI
import GatehouseCore
import Logging
import Metrics
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// A before-hook on the operator's HTTP endpoint. It receives the event as JSON (signed like a webhook
/// when it has a secret) and answers `{"decision": "allow"}`, `{"decision": "deny", "message": …,
/// "errors": [{"field", "code", "message"}]}`, or `allow` with `profile`, `app_metadata` or `claims`.
struct HTTPFlowHook: FlowHook {
    let hook: HooksConfiguration.Hook
    let allowedClaims: Set<String>
    let logger: Logger

    func before(_ event: HookEvent) async throws -> HookVerdict {
        guard hook.points?.contains(event.point) ?? HookPoint.defaultPoints.contains(event.point),
            hook.clients?.contains(event.clientID) ?? true
        else { return .allow }
        do {
            let verdict = try await call(event)
            let outcome =
                switch verdict {
                case .allow: "allow"
                case .change: "change"
                case .deny: "deny"
                }
            Counter(label: "gatehouse_hook_calls", dimensions: [("point", event.point.rawValue), ("outcome", outcome)]).increment()
            return verdict
        } catch {
            Counter(label: "gatehouse_hook_calls", dimensions: [("point", event.point.rawValue), ("outcome", "failed")]).increment()
            logger.warning(
                "hook failed",
                metadata: [
                    "hook": "\(URLComponents(string: hook.url)?.host ?? "?")", "point": "\(event.point.rawValue)",
                    "reason": "\(String(describing: error).prefix(200))", "policy": "\(hook.failOpen ? "allow" : "deny")",
                ])
            if hook.failOpen { return .allow }
            throw GatehouseError.hookFailed
        }
    }

    private func call(_ event: HookEvent) async throws -> HookVerdict {
        let now = Date()
        let body = try HookEventBody(type: event.point.rawValue, event: event, at: now).encoded()
        var request = HTTPClientRequest(url: hook.url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Gatehouse-Hooks")
        if !hook.secrets.isEmpty {
            let id = "hook_" + UUID().uuidString.lowercased()
            for (name, value) in WebhookSignature.headers(id: id, timestamp: now, body: body, secrets: hook.secrets) {
                request.headers.add(name: name, value: value)
            }
        }
        request.body = .bytes(ByteBuffer(data: body))
        let (status, answer) = try await HookHTTPClient.send(request, operation: "hook " + event.point.rawValue, timeout: hook.timeout)
        guard (200..<300).contains(status) else { throw HookCallError.status(status) }
        let reply: Reply
        do {
            reply = try JSONDecoder().decode(Reply.self, from: Data(buffer: answer))
        } catch {
            throw HookCallError.badAnswer("not a hook answer")
        }
        return try verdict(reply, point: event.point)
    }

    /// A deny becomes the same validation result a rule of ours would give; changes are checked
    /// against the limits the user's own input has.
    func verdict(_ reply: Reply, point: HookPoint) throws -> HookVerdict {
        switch reply.decision {
        case "deny":
            var result = ValidationResult()
            for error in reply.errors ?? [] {
                let message = String(error.message.prefix(500))
                // Only codes apps already know; anything else becomes the generic one.
                let code = error.code.flatMap { raw in ErrorCode.serverCodes.first { $0.rawValue == raw } }
                if let field = error.field {
                    result.invalidate(field: String(field.prefix(100)), code: code ?? .invalidValue, message: message)
                } else {
                    result.invalidate(code: code ?? .validationFailed, message: message)
                }
            }
            if let message = reply.message { result.invalidate(withErrorMessage: String(message.prefix(500))) }
            if result.isValid { result.invalidate(withErrorMessage: "This request was refused.") }
            return .deny(result)
        case "allow":
            var changes = HookChanges(profile: reply.profile, appMetadata: reply.appMetadata, claims: reply.claims ?? [:])
            if let profile = changes.profile {
                var result = ValidationResult()
                ProfileValidator().validate(profile, now: Date(), into: &result)
                guard result.isValid else { throw HookCallError.badAnswer("the profile breaks a rule: \(result.errors.map(\.message))") }
            }
            if let metadata = changes.appMetadata, !ProfileValidator.fits(appMetadata: metadata) {
                throw HookCallError.badAnswer("app_metadata is over 16 KiB")
            }
            if let name = changes.claims.keys.sorted().first(where: { !allowedClaims.contains($0) }) {
                throw HookCallError.badAnswer("the claim \(name) is not in allowed_claims")
            }
            if point != .tokenIssue { changes.claims = [:] }
            return changes.isEmpty ? .allow : .change(changes)
        default:
            throw HookCallError.badAnswer("decision must be allow or deny")
        }
    }

    struct Reply: Decodable {
        struct FieldMessage: Decodable {
            var field: String?
            var code: String?
            var message: String
        }
        var decision: String
        var message: String?
        var errors: [FieldMessage]?
        var profile: Profile?
        var appMetadata: [String: JSONValue]?
        var claims: [String: JSONValue]?
        enum CodingKeys: String, CodingKey {
            case decision, message, errors, profile, claims
            case appMetadata = "app_metadata"
        }
    }
}

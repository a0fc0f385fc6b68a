import Foundation
import GatehouseCore

/// A bot challenge service's siteverify endpoint (the shape Turnstile, hCaptcha and reCAPTCHA share)
/// on a real socket: a token starting with `good-` passes, any other fails; every call is recorded.
public enum SiteverifyStandIn {
    public static let secret = "siteverify-test-secret"
    public static let siteKey = "0x4AAAAAAAtestSiteKey"

    public static func start() async throws -> HookServer {
        try await HookServer.start { request in
            let fields = form(request.text)
            let success = fields["secret"] == secret && fields["response"]?.hasPrefix("good-") == true
            return HookServer.Answer(
                body: success ? #"{"success":true,"hostname":"127.0.0.1"}"# : #"{"success":false,"error-codes":["invalid-input-response"]}"#
            )
        }
    }

    /// The service as the server is told of it.
    public static func service(_ server: HookServer, kind: BotChallengeService.Kind = .turnstile) -> BotChallengeService {
        BotChallengeService(kind: kind, siteKey: siteKey, secret: secret, verifyURL: "http://127.0.0.1:\(server.port)/siteverify")
    }

    public static func form(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }
}

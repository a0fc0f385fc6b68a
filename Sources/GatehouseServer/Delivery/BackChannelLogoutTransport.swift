import AsyncHTTPClient
import Foundation
import GatehouseAPI
import GatehouseCore
import Metrics
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Posts OpenID Connect Back-Channel Logout tokens (§2.4–2.5) from the outbox: the token is signed now,
/// so a retry carries a fresh `iat` and `exp`. Anything but 2xx is retried by the outbox with backoff.
struct BackChannelLogoutTransport: MessageTransport {
    let tokens: AccessTokens
    let clock: any WallClock
    let timeout: Duration

    /// How long a logout token is good for: enough for a slow receiver, too short to hoard.
    static let lifetime = 120
    static let event = "http://schemas.openid.net/event/backchannel-logout"

    init(tokens: AccessTokens, clock: any WallClock, timeout: Duration) {
        self.tokens = tokens
        self.clock = clock
        self.timeout = timeout
    }

    struct LogoutToken: Encodable {
        var iss: String
        var sub: String
        var aud: String
        var iat: Int
        var exp: Int
        var jti: String
        var sid: String
        /// No `nonce` (§2.4 forbids one, so a logout token can never pass for an ID token).
        var events: [String: [String: String]]
    }

    func deliver(_ message: OutgoingMessage) async throws {
        guard let notice = try? JSONDecoder().decode(LogoutNotice.self, from: Data(message.text.utf8)) else {
            throw DeliveryFailure(permanent: true, reason: "unreadable logout notice")
        }
        let now = Int(clock.now().timeIntervalSince1970)
        let token = try tokens.sign(
            LogoutToken(
                iss: tokens.issuer, sub: notice.sub, aud: notice.clientID, iat: now, exp: now + Self.lifetime,
                jti: UUID().uuidString.lowercased(), sid: notice.sid, events: [Self.event: [:]]),
            typ: "logout+jwt", algorithm: notice.algorithm)
        var request = HTTPClientRequest(url: message.recipient)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "User-Agent", value: "Gatehouse-Logout")
        request.body = .bytes(ByteBuffer(string: FormEncoding.encode([("logout_token", token)])))
        let status: Int
        do {
            status = try await HookHTTPClient.send(request, operation: "logout notice", timeout: timeout, keepBody: false).status
        } catch {
            Self.count("unreachable")
            throw DeliveryFailure(permanent: false, reason: "back-channel logout endpoint unreachable: \(error)")
        }
        guard (200..<300).contains(status) else {
            Self.count("refused")
            throw DeliveryFailure(permanent: false, reason: "back-channel logout endpoint answered \(status)")
        }
        Self.count("delivered")
    }

    private static func count(_ outcome: String) {
        Counter(label: "gatehouse_backchannel_logout_attempts", dimensions: [("outcome", outcome)]).increment()
    }
}

import AsyncHTTPClient
import Foundation
import GatehouseCore
import Metrics
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Posts webhooks from the outbox, signed per Standard Webhooks with every current secret of the
/// endpoint. Any answer but 2xx is retried by the outbox with backoff, except 410 Gone (the receiver
/// asks to stop); the `webhook-id` stays the same across attempts.
struct WebhookTransport: MessageTransport {
    let secrets: [String: [WebhookSecret]]
    let timeout: Duration

    init(webhooks: [HooksConfiguration.Webhook], timeout: Duration) {
        var secrets: [String: [WebhookSecret]] = [:]
        for webhook in webhooks { secrets[webhook.subscription.url] = webhook.secrets }
        self.secrets = secrets
        self.timeout = timeout
    }

    func deliver(_ message: OutgoingMessage) async throws {
        guard let keys = secrets[message.recipient] else {
            // Left from an endpoint the operator removed since: nobody is there to verify it.
            throw DeliveryFailure(permanent: true, reason: "the endpoint is no longer configured")
        }
        let body = Data(message.text.utf8)
        var request = HTTPClientRequest(url: message.recipient)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "Gatehouse-Webhooks")
        for (name, value) in WebhookSignature.headers(id: message.messageID, timestamp: Date(), body: body, secrets: keys) {
            request.headers.add(name: name, value: value)
        }
        request.body = .bytes(ByteBuffer(data: body))
        let status: Int
        do {
            status = try await HookHTTPClient.send(request, operation: "webhook " + message.kind, timeout: timeout, keepBody: false).status
        } catch {
            Self.count("unreachable")
            throw DeliveryFailure(permanent: false, reason: "webhook endpoint unreachable: \(error)")
        }
        guard (200..<300).contains(status) else {
            Self.count("refused")
            throw DeliveryFailure(permanent: status == 410, reason: "webhook endpoint answered \(status)")
        }
        Self.count("delivered")
    }

    private static func count(_ outcome: String) {
        Counter(label: "gatehouse_webhook_attempts", dimensions: [("outcome", outcome)]).increment()
    }
}

import Foundation
import GatehouseAPI

/// An endpoint that receives after-events.
public struct WebhookSubscription: Sendable, Hashable {
    public var url: String
    /// Event types (`user.created`, …); nil for all.
    public var events: Set<String>?
    /// Client ids whose events it receives; nil for all.
    public var clients: Set<String>?

    public init(url: String, events: Set<String>? = nil, clients: Set<String>? = nil) {
        self.url = url
        self.events = events
        self.clients = clients
    }

    func wants(_ type: String, clientID: String) -> Bool {
        (events?.contains(type) ?? true) && (clients?.contains(clientID) ?? true)
    }
}

extension HookPoint {
    /// The webhook event type an after-point reports; token issue and the flows' points are too
    /// frequent to report.
    public var webhookType: String? {
        switch self {
        case .signup: "user.created"
        case .login: "user.signed_in"
        case .verification: "user.verified"
        case .recovery: "user.recovered"
        case .profileUpdate: "user.updated"
        case .passwordChange: "password.changed"
        case .logout: "session.revoked"
        case .authenticatorRemoval: "authenticator.deregistered"
        case .factorEnrolment: AuditEvent.factorEnrolled
        case .factorRemoval: AuditEvent.factorRemoved
        case .recoveryCodeUse: AuditEvent.recoveryCodeUsed
        case .tokenIssue, .flowStart, .flowComplete: nil
        }
    }

    public static var webhookTypes: [String] { allCases.compactMap(\.webhookType) }
}

/// Turns after-events into outbox rows, one per subscribed endpoint. The row's id is the webhook's
/// `webhook-id`, the same on every retry, so a receiver can drop what it has already seen.
public struct WebhookOutbox: Sendable {
    public let subscriptions: [WebhookSubscription]

    public init(subscriptions: [WebhookSubscription]) { self.subscriptions = subscriptions }

    func enqueue(_ event: HookEvent, secret: ServerSecret, now: Date, stores: any Stores) async throws {
        guard let type = event.point.webhookType else { return }
        let targets = subscriptions.filter { $0.wants(type, clientID: event.clientID) }
        guard !targets.isEmpty else { return }
        // Sealed like mail: the body holds addresses and profile data.
        let sealed = try secret.seal(try HookEventBody(type: type, event: event, at: now).encoded())
        for target in targets {
            try await stores.outbox.enqueue(
                OutboxMessage(kind: type, channel: .webhook, recipient: target.url, locale: nil, sealedPayload: sealed, createdAt: now))
        }
    }
}

import Foundation

/// A message waiting to leave. Flows write it in the same transaction as the change that causes it.
public struct OutboxMessage: Sendable, Hashable {
    /// `logout`: an OpenID Connect back-channel logout token to a client (``LogoutNotice``).
    public enum Channel: String, Sendable, Hashable { case email, sms, webhook, logout }
    public enum Status: String, Sendable, Hashable { case pending, sending, sent, dead }

    public var id: UUID
    /// The template to render: `verification`, `recovery`, `signup_notice`, `password_changed`, …
    public var kind: String
    public var channel: Channel
    public var recipient: String
    public var locale: String?
    /// Template variables as JSON, sealed under the server secret: they can hold one-time codes.
    public var sealedPayload: String
    public var status: Status
    public var attempts: Int
    public var createdAt: Date
    public var dueAt: Date
    public var leaseUntil: Date?
    public var lastError: String?
    public var sentAt: Date?

    public init(
        id: UUID = UUID(), kind: String, channel: Channel, recipient: String, locale: String?, sealedPayload: String,
        status: Status = .pending, attempts: Int = 0, createdAt: Date, dueAt: Date? = nil, leaseUntil: Date? = nil,
        lastError: String? = nil, sentAt: Date? = nil
    ) {
        self.id = id
        self.kind = kind
        self.channel = channel
        self.recipient = recipient
        self.locale = locale
        self.sealedPayload = sealedPayload
        self.status = status
        self.attempts = attempts
        self.createdAt = createdAt
        self.dueAt = dueAt ?? createdAt
        self.leaseUntil = leaseUntil
        self.lastError = lastError
        self.sentAt = sentAt
    }
}

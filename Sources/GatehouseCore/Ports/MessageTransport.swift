import Foundation

/// A rendered message, ready for a transport.
public struct OutgoingMessage: Sendable, Hashable {
    public var kind: String
    public var channel: OutboxMessage.Channel
    public var recipient: String
    /// Email only.
    public var subject: String?
    public var text: String
    /// Email only; sent as the HTML part of multipart/alternative.
    public var html: String?
    /// Stable per outbox row, so a retried delivery is recognisably the same message.
    public var messageID: String

    public init(
        kind: String, channel: OutboxMessage.Channel, recipient: String, subject: String?, text: String, html: String?,
        messageID: String
    ) {
        self.kind = kind
        self.channel = channel
        self.recipient = recipient
        self.subject = subject
        self.text = text
        self.html = html
        self.messageID = messageID
    }
}

/// Sends messages of one channel: SMTP, an SMS gateway, the development outbox, a test capture.
public protocol MessageTransport: Sendable {
    func deliver(_ message: OutgoingMessage) async throws
}

/// A delivery that failed. `permanent` failures (a 5xx from SMTP, a 4xx from the gateway) are not retried.
public struct DeliveryFailure: Error, Sendable, CustomStringConvertible {
    public var permanent: Bool
    public var reason: String

    public init(permanent: Bool, reason: String) {
        self.permanent = permanent
        self.reason = reason
    }

    public var description: String { (permanent ? "permanent: " : "temporary: ") + reason }
}

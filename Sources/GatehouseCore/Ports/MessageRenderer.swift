import Foundation

/// Turns an outbox row's kind, locale and variables into the text people read.
public protocol MessageRenderer: Sendable {
    func render(
        kind: String, channel: OutboxMessage.Channel, locale: String?, variables: [String: String]
    ) throws
        -> (subject: String?, text: String, html: String?)
}

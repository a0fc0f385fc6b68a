import Foundation
import GatehouseCore
import GatehouseSMTP
import Logging

/// Builds RFC 5322 mail from a rendered message: shared by SMTP and the development outbox's `.eml`.
struct MailComposer: Sendable {
    let from: MailAddress

    init(from raw: String) {
        from = Self.parseAddress(raw)
    }

    func message(_ message: OutgoingMessage) -> MailMessage {
        MailMessage(
            from: from, to: [MailAddress(message.recipient)], subject: message.subject ?? "", textBody: message.text,
            htmlBody: message.html, messageID: message.messageID)
    }

    func compose(_ message: OutgoingMessage) throws -> String {
        try MIMEEncoder().encode(self.message(message)).text
    }

    /// `Name <address>` or a bare address.
    static func parseAddress(_ raw: String) -> MailAddress {
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        if let open = trimmed.lastIndex(of: "<"), trimmed.hasSuffix(">") {
            let name = trimmed[..<open].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            let address = String(trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)])
            return MailAddress(address, name: name.isEmpty ? nil : name)
        }
        return MailAddress(trimmed)
    }
}

/// Mail over SMTP; SMTP's verdict decides between retry and dead letter.
struct SMTPMailTransport: MessageTransport {
    let client: SMTPClient
    let composer: MailComposer

    init(url: String, from: String, logger: Logger) throws {
        client = try SMTPClient(configuration: try SMTPConfiguration.parse(url: url), logger: logger)
        composer = MailComposer(from: from)
    }

    func deliver(_ message: OutgoingMessage) async throws {
        do {
            try await client.send(composer.message(message))
        } catch let error as SMTPError {
            throw DeliveryFailure(permanent: error.isPermanent, reason: error.description)
        }
    }
}

import Foundation
import GatehouseCore
import Logging

/// The transport when no SMTP server or SMS gateway is configured: each message becomes a file in
/// `GATEHOUSE_OUTBOX_DIR`, and a log line names the recipient and, for codes, the code, so that
/// `serve` works with nothing set up. Development only, which is why it may log a code.
public struct DevelopmentOutbox: MessageTransport {
    let directory: URL
    let from: String
    let logger: Logger

    public init(directory: String, from: String, logger: Logger) {
        self.directory = URL(fileURLWithPath: directory)
        self.from = from
        self.logger = logger
    }

    public func deliver(_ message: OutgoingMessage) async throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stamp = Int(Date().timeIntervalSince1970 * 1000)
        let safeRecipient = message.recipient.map { ($0.isASCII && ($0.isLetter || $0.isNumber)) || ".@-_+".contains($0) ? $0 : "_" }
        let name = "\(stamp)-\(message.kind)-\(String(safeRecipient)).\(message.channel == .email ? "eml" : "txt")"
        let body: String
        switch message.channel {
        case .email:
            body = try MailComposer(from: from).compose(message)
        case .sms, .webhook, .logout:
            body = "To: \(message.recipient)\n\n\(message.text)\n"
        }
        // The files hold codes: readable by the service user only.
        let path = directory.appendingPathComponent(name).path
        guard FileManager.default.createFile(atPath: path, contents: Data(body.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw DeliveryFailure(permanent: false, reason: "cannot write \(name)")
        }
        var metadata: Logger.Metadata = ["to": "\(message.recipient)", "kind": "\(message.kind)", "file": "\(name)"]
        if let code = Self.code(in: message.text) { metadata["code"] = "\(code)" }
        logger.notice("development outbox: message written", metadata: metadata)
    }

    /// The first run of six digits, as the code templates write it.
    static func code(in text: String) -> String? {
        var run = ""
        for character in text {
            if character.isASCII && character.isNumber {
                run.append(character)
            } else {
                if run.count == 6 { return run }
                run = ""
            }
        }
        return run.count == 6 ? run : nil
    }
}

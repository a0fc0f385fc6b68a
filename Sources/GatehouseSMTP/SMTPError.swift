/// The point in an SMTP conversation where something went wrong.
///
/// Carried by ``SMTPError`` so logs and dead-letter records say how far a delivery got.
public enum SMTPStep: String, Sendable, Hashable {
    case connect
    case greeting
    case ehlo
    case helo
    case startTLS
    case authentication
    case mailFrom
    case recipient
    case data
    case message
    case quit
}

/// Why sending mail failed, detailed enough for an outbox dispatcher to choose between retrying
/// and dead-lettering the message.
///
/// Use ``isPermanent`` for that choice: it is `true` for 5xx replies and for messages that can
/// never be encoded, and `false` for everything a later attempt might get past (4xx replies,
/// refused or dropped connections, timeouts, TLS failures, server capabilities that are missing
/// today).
public struct SMTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The broad class of failure.
    public enum Kind: String, Sendable, Hashable {
        /// The server answered with a reply other than the one the step needs; see ``SMTPError/replyCode``.
        case rejected
        /// The TCP connection could not be established (refused, unreachable, name not resolved).
        case connectionFailed
        /// The server closed the connection before the conversation finished.
        case connectionClosed
        /// The connection or a reply took longer than ``SMTPConfiguration/timeout``.
        case timeout
        /// The TLS handshake failed, for example because the certificate is not trusted.
        case tls
        /// ``SMTPConfiguration/Security-swift.enum/startTLSRequired`` was set but the server does not offer STARTTLS.
        case startTLSUnavailable
        /// Credentials are configured but the server offers neither AUTH PLAIN nor AUTH LOGIN.
        case authenticationUnavailable
        /// Credentials are configured but the connection is not encrypted and the server is not on loopback.
        case insecureCredentials
        /// The server broke the protocol: a malformed reply, or data sent ahead of a TLS upgrade.
        case protocolViolation
        /// The message is larger than the limit the server announced with SIZE.
        case messageTooLarge
        /// The message cannot be encoded: a header value holds CR or LF, an address is malformed, …
        case invalidMessage
        /// The configuration or SMTP URL is unusable.
        case invalidConfiguration
    }

    /// The broad class of failure.
    public var kind: Kind
    /// The conversation step that failed, when the failure happened on the wire.
    public var step: SMTPStep?
    /// The server's reply code, when the failure is a reply.
    public var replyCode: Int?
    /// The server's reply text (continuation lines joined with newlines), when the failure is a reply.
    public var replyText: String?
    /// Gatehouse's own explanation; never contains credentials or message content.
    public var detail: String

    /// Creates an error; the client builds these, tests and fakes may too.
    public init(
        _ kind: Kind,
        step: SMTPStep? = nil,
        replyCode: Int? = nil,
        replyText: String? = nil,
        detail: String
    ) {
        self.kind = kind
        self.step = step
        self.replyCode = replyCode
        self.replyText = replyText
        self.detail = detail
    }

    /// Whether retrying the same message later cannot succeed.
    ///
    /// `true` for a 5xx reply and for messages that can never be sent as they are
    /// (``Kind-swift.enum/invalidMessage``, ``Kind-swift.enum/messageTooLarge``); `false` for 4xx
    /// replies and for connection, timeout, TLS and capability failures, which a retry may get past.
    public var isPermanent: Bool {
        if let replyCode { return (500..<600).contains(replyCode) }
        switch kind {
        case .invalidMessage, .messageTooLarge: return true
        default: return false
        }
    }

    public var description: String {
        var text = "SMTP \(kind.rawValue)"
        if let step { text += " at \(step.rawValue)" }
        text += ": \(detail)"
        if let replyCode {
            text += " (server replied \(replyCode)"
            if let replyText, !replyText.isEmpty { text += " \(replyText)" }
            text += ")"
        }
        return text
    }
}

extension SMTPError {
    static func invalidMessage(_ detail: String) -> SMTPError {
        SMTPError(.invalidMessage, detail: detail)
    }

    static func invalidConfiguration(_ detail: String) -> SMTPError {
        SMTPError(.invalidConfiguration, detail: detail)
    }
}

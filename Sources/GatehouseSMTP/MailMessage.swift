import struct Foundation.Date

/// A mailbox: an address and an optional display name.
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    /// The display name, such as "Ada Lovelace"; any Unicode, encoded on the wire as RFC 2047 needs.
    public var name: String?
    /// The address, such as `ada@example.com`: printable ASCII (no SMTPUTF8), IDN domains already in punycode.
    public var address: String

    /// Creates a mailbox.
    public init(_ address: String, name: String? = nil) {
        self.address = address
        self.name = name
    }

    /// The domain part, the most a log line may say about a recipient.
    public var domain: String {
        guard let at = address.lastIndex(of: "@") else { return "" }
        return String(address[address.index(after: at)...])
    }

    public var description: String {
        if let name, !name.isEmpty { return "\(name) <\(address)>" }
        return address
    }
}

/// An extra header line such as `Reply-To` or `List-Unsubscribe`.
///
/// Values are sent as they are when printable ASCII (folded at spaces) and as RFC 2047
/// encoded-words otherwise, so non-ASCII belongs only in unstructured headers. Headers the encoder
/// writes itself (From, To, Subject, Date, Message-ID, MIME-Version, Content-*) cannot be overridden,
/// and neither can Cc or Bcc, which this transport does not support.
public struct MailHeader: Sendable, Hashable {
    /// The field name, such as `Reply-To`.
    public var name: String
    /// The field value, without CR or LF.
    public var value: String

    /// Creates a header.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// An email ready for ``SMTPClient/send(_:)``.
///
/// Nothing is checked here; ``MIMEEncoder`` rejects CR/LF in header values and malformed addresses
/// when the message is encoded, before any connection is made.
public struct MailMessage: Sendable, Hashable {
    /// The author, used for the From header and the envelope sender (MAIL FROM).
    public var from: MailAddress
    /// The recipients (at least one), used for the To header and the envelope (RCPT TO).
    public var to: [MailAddress]
    /// The subject; any Unicode.
    public var subject: String
    /// The plain-text body; always sent.
    public var textBody: String
    /// An HTML alternative; when set the message is `multipart/alternative`.
    public var htmlBody: String?
    /// The Message-ID including angle brackets, such as `<0f8fad5b-d9cb-469f-a165-70867728950e@gatehouse.example>`.
    ///
    /// Keep it stable for one outbox row so a retried delivery is recognisably the same message.
    public var messageID: String
    /// The Date header's value.
    public var date: Date
    /// Extra headers, written after the standard ones in this order.
    public var extraHeaders: [MailHeader]

    /// Creates a message.
    public init(
        from: MailAddress,
        to: [MailAddress],
        subject: String,
        textBody: String,
        htmlBody: String? = nil,
        messageID: String,
        date: Date = Date(),
        extraHeaders: [MailHeader] = []
    ) {
        self.from = from
        self.to = to
        self.subject = subject
        self.textBody = textBody
        self.htmlBody = htmlBody
        self.messageID = messageID
        self.date = date
        self.extraHeaders = extraHeaders
    }
}

/// A ``MailMessage`` rendered as RFC 5322 / MIME text, ready for SMTP DATA.
public struct MIMEMessage: Sendable, Hashable {
    /// The whole message: headers, blank line and body; 7-bit ASCII, CRLF line endings, lines at most 998 characters.
    ///
    /// Not yet dot-stuffed: that is the SMTP transport's job.
    public var text: String
    /// The multipart boundary, or `nil` for a single `text/plain` part.
    public var boundary: String?
}

/// Turns a ``MailMessage`` into wire text.
///
/// Output is `text/plain; charset=utf-8`, or `multipart/alternative` with the text part first and
/// the HTML part second when ``MailMessage/htmlBody`` is set. Bodies are UTF-8 in quoted-printable,
/// or base64 when more than about a sixth of the bytes would need escaping (mostly non-Latin
/// text), so the message is 7-bit clean and works without 8BITMIME.
public struct MIMEEncoder: Sendable {
    /// Header names the encoder writes itself, or that would change delivery, which
    /// ``MailMessage/extraHeaders`` may therefore not contain (compared case-insensitively).
    public static let reservedHeaderNames: Set<String> = [
        "from", "to", "cc", "bcc", "subject", "date", "message-id", "mime-version",
        "content-type", "content-transfer-encoding", "content-disposition", "sender",
    ]

    /// Returns a boundary for the given attempt (0, 1, …).
    private let makeBoundary: @Sendable (Int) -> String

    /// Creates an encoder whose boundaries are random.
    public init() {
        self.makeBoundary = { _ in MIMEEncoder.randomBoundary() }
    }

    /// Creates an encoder with chosen boundaries per attempt, for tests of collision handling.
    init(boundaries: @escaping @Sendable (Int) -> String) {
        self.makeBoundary = boundaries
    }

    /// Encodes `message`.
    ///
    /// - Throws: ``SMTPError`` of kind ``SMTPError/Kind-swift.enum/invalidMessage`` (permanent)
    ///   when a header value or address holds CR or LF, an address is malformed, there is no
    ///   recipient, the Message-ID is not `<…@…>`, or an extra header is reserved or malformed.
    public func encode(_ message: MailMessage) throws -> MIMEMessage {
        guard !message.to.isEmpty else { throw SMTPError.invalidMessage("the message has no recipients") }
        var headers = try HeaderEncoding.field("Date", [RFC5322Date.format(message.date)])
        headers += try HeaderEncoding.field("From", HeaderEncoding.mailboxTokens(message.from, in: "From"))
        var recipientTokens: [String] = []
        for (index, recipient) in message.to.enumerated() {
            var tokens = try HeaderEncoding.mailboxTokens(recipient, in: "To")
            // The comma sticks to the mailbox before it so folding happens after it.
            if index < message.to.count - 1 { tokens[tokens.count - 1] += "," }
            recipientTokens += tokens
        }
        headers += try HeaderEncoding.field("To", recipientTokens)
        headers += try HeaderEncoding.field(
            "Subject", HeaderEncoding.unstructuredTokens(message.subject, in: "Subject"))
        try Self.validateMessageID(message.messageID)
        headers += try HeaderEncoding.field("Message-ID", [message.messageID])
        headers += "MIME-Version: 1.0\r\n"
        for header in message.extraHeaders {
            try HeaderEncoding.validateFieldName(header.name)
            guard !Self.reservedHeaderNames.contains(header.name.lowercased()) else {
                throw SMTPError.invalidMessage(
                    "the extra header \(header.name) is written by the encoder or not supported")
            }
            headers += try HeaderEncoding.field(
                header.name,
                HeaderEncoding.extraHeaderTokens(header.value, in: "\(header.name) header")
            )
        }

        let textPart = Self.bodyPart(message.textBody, subtype: "plain")
        guard let html = message.htmlBody else {
            return MIMEMessage(text: headers + textPart.headers + "\r\n" + textPart.body, boundary: nil)
        }
        let htmlPart = Self.bodyPart(html, subtype: "html")
        var attempt = 0
        var boundary = makeBoundary(attempt)
        // Quoted-printable and base64 can never produce "=_", which random boundaries start with,
        // but the check keeps the guarantee independent of that reasoning.
        while textPart.body.contains(boundary) || htmlPart.body.contains(boundary) {
            attempt += 1
            boundary = makeBoundary(attempt)
        }
        // The CRLF before each delimiter belongs to the delimiter (RFC 2046 §5.1.1), so one more
        // keeps each part's final line break.
        let body =
            "--\(boundary)\r\n\(textPart.headers)\r\n\(textPart.body)\r\n"
            + "--\(boundary)\r\n\(htmlPart.headers)\r\n\(htmlPart.body)\r\n"
            + "--\(boundary)--\r\n"
        // Folded after the semicolon: with the boundary the line would pass 78 characters.
        headers += try HeaderEncoding.field("Content-Type", ["multipart/alternative;", "boundary=\"\(boundary)\""])
        return MIMEMessage(text: headers + "\r\n" + body, boundary: boundary)
    }

    /// A part's Content-Type and Content-Transfer-Encoding lines, and its encoded body ending in CRLF.
    private static func bodyPart(_ text: String, subtype: String) -> (headers: String, body: String) {
        let normalized = normalizeLineEndings(text)
        let escaped = QuotedPrintable.escapedByteCount(normalized)
        let useBase64 = escaped * 6 > normalized.utf8.count
        let headers =
            "Content-Type: text/\(subtype); charset=utf-8\r\n"
            + "Content-Transfer-Encoding: \(useBase64 ? "base64" : "quoted-printable")\r\n"
        let body = useBase64 ? Base64.encodeBody(normalized.utf8) : QuotedPrintable.encode(normalized)
        return (headers, body.isEmpty ? "\r\n" : body)
    }

    /// Turns LF and lone CR into CRLF, the only line ending MIME and SMTP allow.
    static func normalizeLineEndings(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + 16)
        var previousWasCR = false
        for byte in text.utf8 {
            if byte == 10 {
                if !previousWasCR { output.append(13) }
                output.append(10)
                previousWasCR = false
                continue
            }
            if previousWasCR { output.append(10) }
            previousWasCR = byte == 13
            output.append(byte)
        }
        if previousWasCR { output.append(10) }
        return String(decoding: output, as: UTF8.self)
    }

    /// Requires `<left@right>` with printable ASCII and no spaces or further angle brackets.
    static func validateMessageID(_ id: String) throws {
        try HeaderEncoding.rejectLineBreaks(id, in: "Message-ID")
        let inner = id.utf8.dropFirst().dropLast()
        guard id.hasPrefix("<"), id.hasSuffix(">"), id.utf8.count <= 250,
            inner.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "<") && $0 != UInt8(ascii: ">") }),
            let at = inner.firstIndex(of: UInt8(ascii: "@")), at != inner.startIndex,
            inner.index(after: at) != inner.endIndex
        else {
            throw SMTPError.invalidMessage("the Message-ID must look like <unique@host>")
        }
    }

    /// `=_` followed by 32 random alphanumerics; `=_` cannot occur in quoted-printable or base64.
    static func randomBoundary() -> String {
        let characters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return "=_gatehouse_" + String((0..<32).map { _ in characters.randomElement(using: &generator)! })
    }
}

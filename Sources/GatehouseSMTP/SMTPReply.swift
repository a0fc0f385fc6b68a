/// One complete server reply: a three-digit code and one or more lines of text.
struct SMTPReply: Sendable, Hashable {
    /// The reply code, 200–599.
    var code: Int
    /// The text of each line after the code and separator, sanitised to printable characters.
    var lines: [String]

    /// The lines joined with newlines, for error messages.
    var text: String { lines.joined(separator: "\n") }

    /// 2xx: the command succeeded.
    var isPositiveCompletion: Bool { (200..<300).contains(code) }
}

/// The capabilities a server announced in its EHLO reply (RFC 5321 §4.1.1.1).
struct SMTPExtensions: Sendable, Hashable {
    /// STARTTLS (RFC 3207) is offered.
    var startTLS = false
    /// Upper-cased SASL mechanisms from `AUTH …` (or the pre-standard `AUTH=…`).
    var authMechanisms: Set<String> = []
    /// `SIZE` was announced; the value is its limit in bytes, 0 meaning none stated (RFC 1870).
    var maximumSize: Int?
    /// 8BITMIME (RFC 6152) is offered; recorded for logs, since the encoder only produces 7-bit text.
    var eightBitMIME = false

    init() {}

    /// Parses an EHLO reply; the first line is the server's greeting and is skipped.
    init(ehloReply reply: SMTPReply) {
        for line in reply.lines.dropFirst() {
            let words = line.split(separator: " ")
            guard let keyword = words.first?.uppercased() else { continue }
            switch keyword {
            case "STARTTLS":
                startTLS = true
            case "8BITMIME":
                eightBitMIME = true
            case "SIZE":
                maximumSize = words.dropFirst().first.flatMap { Int($0) } ?? 0
            case "AUTH":
                authMechanisms.formUnion(words.dropFirst().map { $0.uppercased() })
            case _ where keyword.hasPrefix("AUTH="):
                authMechanisms.formUnion([String(keyword.dropFirst(5))] + words.dropFirst().map { $0.uppercased() })
            default:
                break
            }
        }
        authMechanisms.remove("")
    }
}

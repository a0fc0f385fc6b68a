/// Validation and rendering of header fields (RFC 5322 §2.2, §3.4, RFC 2047).
///
/// Every header value passes through here, so this is where header injection is stopped: a CR or
/// LF in any value or address throws instead of starting a new header line.
enum HeaderEncoding {
    /// RFC 5322 §2.1.1: lines SHOULD stay within 78 characters and MUST stay within 998.
    static let preferredLineLength = 78
    static let maximumLineLength = 998

    /// Throws if `value` holds CR or LF, the characters that would let it forge extra header lines.
    static func rejectLineBreaks(_ value: String, in field: String) throws {
        if value.utf8.contains(where: { $0 == 13 || $0 == 10 }) {
            throw SMTPError.invalidMessage("the \(field) holds a CR or LF (header injection)")
        }
    }

    /// Checks an address for use in a header and in MAIL FROM / RCPT TO.
    ///
    /// Deliberately stricter than RFC 5321: printable ASCII without spaces, quotes, brackets or
    /// separators, with a non-empty local part and domain. That excludes rare quoted local parts
    /// and non-ASCII (which would need SMTPUTF8) but guarantees the address cannot alter the
    /// command line or the header it is written into.
    static func validateAddress(_ address: String, in field: String) throws {
        try rejectLineBreaks(address, in: field)
        let forbidden = Set("<>()[]\\,;:\"".utf8)
        guard address.utf8.count <= 254,
            address.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !forbidden.contains($0) })
        else {
            throw SMTPError.invalidMessage(
                "the \(field) address must be at most 254 printable ASCII characters without spaces or <>()[]\\,;:\""
            )
        }
        guard let at = address.lastIndex(of: "@"), at != address.startIndex,
            address.index(after: at) != address.endIndex
        else {
            throw SMTPError.invalidMessage("the \(field) address needs a local part, '@' and a domain")
        }
    }

    /// Renders a mailbox as header tokens: `addr`, `Name <addr>`, `"Quoted, Name" <addr>` or
    /// `=?utf-8?B?…?= <addr>`.
    static func mailboxTokens(_ mailbox: MailAddress, in field: String) throws -> [String] {
        try validateAddress(mailbox.address, in: field)
        guard let name = mailbox.name, !name.isEmpty else { return [mailbox.address] }
        try rejectLineBreaks(name, in: "\(field) display name")
        return displayNameTokens(name) + ["<\(mailbox.address)>"]
    }

    /// The display name as atoms when it is plain, a quoted-string when it has specials, and
    /// encoded-words when it has non-ASCII, control characters, `=?` or is too long to fold.
    static func displayNameTokens(_ name: String) -> [String] {
        guard isPlainASCIIText(name) else { return RFC2047.encodedWords(name) }
        let words = name.split(separator: " ").map(String.init)
        if words.allSatisfy({ $0.utf8.allSatisfy(isAtext) }) { return words }
        let quoted = "\"" + name.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        // A quoted-string is one token; past ~70 characters encoded-words fold more cleanly.
        return quoted.utf8.count <= 70 ? [quoted] : RFC2047.encodedWords(name)
    }

    /// Tokens for an unstructured value such as Subject: its words when it is plain printable
    /// ASCII, otherwise encoded-words.
    static func unstructuredTokens(_ value: String, in field: String) throws -> [String] {
        try rejectLineBreaks(value, in: field)
        if value.isEmpty { return [] }
        if isPlainASCIIText(value) {
            let words = value.split(separator: " ").map(String.init)
            // A word too long for one line cannot be folded; encoded-words can be.
            if words.allSatisfy({ $0.utf8.count <= preferredLineLength - 12 }) { return words }
        }
        return RFC2047.encodedWords(value)
    }

    /// Tokens for an extra header's value: printable ASCII is kept verbatim (structured values such
    /// as `List-Unsubscribe: <https://…>` must not be encoded) and folded only at single spaces;
    /// anything with non-ASCII becomes encoded-words, which suits unstructured values only.
    static func extraHeaderTokens(_ value: String, in field: String) throws -> [String] {
        try rejectLineBreaks(value, in: field)
        if value.isEmpty { return [] }
        guard value.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) else { return RFC2047.encodedWords(value) }
        return isPlainASCIIText(value, allowEncodedWordMarker: true)
            ? value.split(separator: " ").map(String.init) : [value]
    }

    /// Renders `name: tokens…` folded at token boundaries, ending in CRLF.
    ///
    /// Folding inserts CRLF before the single space that separates tokens, which unfolding
    /// removes again, so the value reads back exactly as the tokens joined with spaces.
    static func field(_ name: String, _ tokens: [String]) throws -> String {
        var output = name + ":"
        var column = output.utf8.count
        for token in tokens {
            let width = token.utf8.count
            if column + 1 + width > preferredLineLength, column > name.utf8.count + 1 {
                output += "\r\n"
                column = 0
            }
            output += " " + token
            column += 1 + width
            if column > maximumLineLength {
                throw SMTPError.invalidMessage("the \(name) header has a part too long to fold within 998 characters")
            }
        }
        return output + "\r\n"
    }

    /// Printable ASCII with single spaces between words, no leading or trailing space, and no `=?`
    /// (which a reader could mistake for the start of an encoded-word).
    static func isPlainASCIIText(_ value: String, allowEncodedWordMarker: Bool = false) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.first != 32, bytes.last != 32 else { return false }
        for (index, byte) in bytes.enumerated() {
            guard byte >= 32, byte < 127 else { return false }
            if index > 0 {
                let previous = bytes[index - 1]
                if previous == 32, byte == 32 { return false }
                if !allowEncodedWordMarker, previous == UInt8(ascii: "="), byte == UInt8(ascii: "?") { return false }
            }
        }
        return true
    }

    /// RFC 5322 `atext`: characters allowed in an unquoted atom.
    private static func isAtext(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-/=?^_`{|}~".utf8.contains(byte)
        }
    }

    /// Checks an extra header's name: printable ASCII without colon or space (RFC 5322 `ftext`).
    static func validateFieldName(_ name: String) throws {
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: ":") }) else {
            throw SMTPError.invalidMessage("an extra header name must be printable ASCII without ':' or spaces")
        }
    }
}

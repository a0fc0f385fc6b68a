/// Quoted-printable (RFC 2045 §6.7), the body encoding for mostly-ASCII text: it stays readable
/// and never produces a line longer than 76 characters whatever the input.
enum QuotedPrintable {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Encodes UTF-8 text whose line breaks are already CRLF, returning CRLF-separated lines.
    ///
    /// Line breaks stay hard breaks; long lines get `=` soft breaks. A leading `.` is left alone
    /// on purpose: SMTP dot-stuffing is the transport's job (see `SMTPDataEncoder`).
    static func encode(_ text: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + text.utf8.count / 8)
        var lines = splitCRLF(Array(text.utf8))
        // A trailing CRLF ends the last line rather than starting an empty one.
        if lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }
        for (number, line) in lines.enumerated() {
            if number > 0 { output += [13, 10] }
            var column = 0
            for (index, byte) in line.enumerated() {
                let isLast = index == line.count - 1
                let literal =
                    (byte >= 33 && byte <= 126 && byte != UInt8(ascii: "="))
                    // Trailing white space would be stripped in transit, so it is escaped.
                    || ((byte == 32 || byte == 9) && !isLast)
                let width = literal ? 1 : 3
                // Keep one column free for the soft-break '=' unless this is the line's last token.
                if column + width > (isLast ? 76 : 75) {
                    output += [UInt8(ascii: "="), 13, 10]
                    column = 0
                }
                if literal {
                    output.append(byte)
                } else {
                    output += [UInt8(ascii: "="), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
                }
                column += width
            }
        }
        output += [13, 10]
        return String(decoding: output, as: UTF8.self)
    }

    /// How many bytes of `text` quoted-printable must escape; `MIMEEncoder` picks base64 above a threshold.
    static func escapedByteCount(_ text: String) -> Int {
        text.utf8.reduce(0) { count, byte in
            let plain =
                (byte >= 32 && byte <= 126 && byte != UInt8(ascii: "=")) || byte == 9 || byte == 13 || byte == 10
            return plain ? count : count + 1
        }
    }

    private static func splitCRLF(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        var index = 0
        while index < bytes.count {
            if bytes[index] == 13, index + 1 < bytes.count, bytes[index + 1] == 10 {
                lines.append(bytes[start..<index])
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        lines.append(bytes[start..<bytes.count])
        return lines
    }
}

import NIOCore

/// Splits the server's byte stream into ``SMTPReply`` values (RFC 5321 §4.2).
///
/// A reply is one line `250 text`, or several lines `250-text` … `250 text` sharing one code.
/// It is a plain value rather than a `ByteToMessageDecoder` so the client handler can see whether
/// bytes are left over, which matters at STARTTLS: anything the server sent after its `220` reply
/// but before the TLS handshake is plaintext an attacker may have injected (RFC 3207 §5).
struct SMTPReplyDecoder {
    /// RFC 5321 allows 512 octets per reply line; some servers send more, but not this much.
    static let maximumLineLength = 4096
    /// A bound on continuation lines so a hostile server cannot grow one reply without limit.
    static let maximumLinesPerReply = 512

    private var buffer = ByteBuffer()
    private var pendingCode: Int?
    private var pendingLines: [String] = []

    /// Whether bytes or lines of an unfinished reply are held.
    var hasUnprocessedInput: Bool { buffer.readableBytes > 0 || pendingCode != nil }

    /// Adds bytes read from the channel.
    mutating func append(_ bytes: inout ByteBuffer) {
        buffer.writeBuffer(&bytes)
    }

    /// Returns the next complete reply, or `nil` if more bytes are needed.
    ///
    /// - Throws: ``SMTPError`` of kind ``SMTPError/Kind-swift.enum/protocolViolation`` for lines that
    ///   are not `NNN[ -]text`, too long, or continue a reply with a different code.
    mutating func nextReply() throws -> SMTPReply? {
        while let line = try nextLine() {
            let (code, isLast, text) = try Self.parse(line)
            if let pendingCode, pendingCode != code {
                throw SMTPError(
                    .protocolViolation, detail: "a multi-line reply changed its code from \(pendingCode) to \(code)")
            }
            pendingCode = code
            pendingLines.append(text)
            if isLast {
                let reply = SMTPReply(code: code, lines: pendingLines)
                pendingCode = nil
                pendingLines = []
                return reply
            }
            if pendingLines.count >= Self.maximumLinesPerReply {
                throw SMTPError(.protocolViolation, detail: "a reply ran past \(Self.maximumLinesPerReply) lines")
            }
        }
        return nil
    }

    /// The next line without its terminator; CRLF is expected, a bare LF is tolerated.
    private mutating func nextLine() throws -> [UInt8]? {
        let view = buffer.readableBytesView
        guard let newline = view.firstIndex(of: 10) else {
            if view.count > Self.maximumLineLength {
                throw SMTPError(.protocolViolation, detail: "a reply line exceeded \(Self.maximumLineLength) bytes")
            }
            return nil
        }
        var line = Array(view[view.startIndex..<newline])
        buffer.moveReaderIndex(forwardBy: newline - view.startIndex + 1)
        if line.last == 13 { line.removeLast() }
        if line.count > Self.maximumLineLength {
            throw SMTPError(.protocolViolation, detail: "a reply line exceeded \(Self.maximumLineLength) bytes")
        }
        buffer.discardReadBytes()
        return line
    }

    private static func parse(_ line: [UInt8]) throws -> (code: Int, isLast: Bool, text: String) {
        guard line.count >= 3,
            (UInt8(ascii: "2")...UInt8(ascii: "5")).contains(line[0]),
            line[1...2].allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            line.count == 3 || line[3] == UInt8(ascii: " ") || line[3] == UInt8(ascii: "-")
        else {
            throw SMTPError(.protocolViolation, detail: "the server sent a line that is not an SMTP reply")
        }
        let code = line[0..<3].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        let isLast = line.count == 3 || line[3] == UInt8(ascii: " ")
        let text = line.count > 4 ? sanitize(line[4...]) : ""
        return (code, isLast, text)
    }

    /// Replaces control characters so server text cannot forge log lines when it is logged.
    private static func sanitize(_ bytes: ArraySlice<UInt8>) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: scalars.append("?")
            default: scalars.append(scalar)
            }
        }
        return String(scalars)
    }
}

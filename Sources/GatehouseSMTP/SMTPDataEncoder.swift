import NIOCore

/// Prepares message text for the DATA phase (RFC 5321 §4.5.2).
enum SMTPDataEncoder {
    /// Dot-stuffs `text` and appends the `CRLF.CRLF` terminator.
    ///
    /// Every line break is written as CRLF whatever the input had: a bare LF or CR must never
    /// reach the server, because servers that treat `LF.LF` or `LF.CRLF` as end-of-data can be
    /// tricked into accepting a second, smuggled message ("SMTP smuggling"). Lines starting with
    /// "." get a second "." so the server never mistakes content for the terminator.
    static func encode(_ text: String, allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
        var buffer = allocator.buffer(capacity: text.utf8.count + text.utf8.count / 64 + 8)
        var atLineStart = true
        var previousWasCR = false
        for byte in text.utf8 {
            switch byte {
            case 10:
                if !previousWasCR { buffer.writeInteger(UInt8(13)) }
                buffer.writeInteger(UInt8(10))
                atLineStart = true
                previousWasCR = false
                continue
            case 13:
                if previousWasCR { buffer.writeInteger(UInt8(10)) }  // CR CR: end the first line.
                buffer.writeInteger(UInt8(13))
                previousWasCR = true
                continue
            default:
                if previousWasCR {
                    buffer.writeInteger(UInt8(10))
                    atLineStart = true
                }
                previousWasCR = false
            }
            if atLineStart, byte == UInt8(ascii: ".") { buffer.writeInteger(UInt8(ascii: ".")) }
            atLineStart = false
            buffer.writeInteger(byte)
        }
        if previousWasCR {
            buffer.writeInteger(UInt8(10))
            atLineStart = true
        }
        if !atLineStart { buffer.writeString("\r\n") }
        buffer.writeString(".\r\n")
        return buffer
    }
}

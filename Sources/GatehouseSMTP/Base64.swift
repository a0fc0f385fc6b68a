/// Base64 (RFC 4648) for encoded-words and bodies, kept here so the module needs no Foundation
/// for encoding and the line layout is exactly what MIME asks for.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Encodes `bytes` as one unbroken line.
    static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output: [UInt8] = []
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index < input.count {
            let b0 = input[index]
            let b1 = index + 1 < input.count ? input[index + 1] : 0
            let b2 = index + 2 < input.count ? input[index + 2] : 0
            output.append(alphabet[Int(b0 >> 2)])
            output.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            output.append(index + 1 < input.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            output.append(index + 2 < input.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Encodes `bytes` as a MIME body: lines of at most 76 characters, each ending in CRLF.
    static func encodeBody(_ bytes: some Collection<UInt8>) -> String {
        let encoded = Array(encode(bytes).utf8)
        var output = ""
        output.reserveCapacity(encoded.count + encoded.count / 38 + 2)
        var start = 0
        while start < encoded.count {
            let end = min(start + 76, encoded.count)
            output += String(decoding: encoded[start..<end], as: UTF8.self)
            output += "\r\n"
            start = end
        }
        return output
    }
}
